// mcp_sdk.js: what the tests that drive `airlock mcp` with the official MCP
// TypeScript SDK client (@modelcontextprotocol/sdk, pinned in
// scripts/deps.sh) share: tests/mcp/test_mcp_sdk.js and
// tests/persist/test_persist_mcp.js. Loading it loads the SDK (exit 1 with
// a message when it is not installed) and skips the test (exit 77) unless
// it runs as root, which airlockd's start needs.
'use strict';

const assert = require('node:assert/strict');
const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');

let Client, StdioClientTransport;
try {
	({ Client } = require('@modelcontextprotocol/sdk/client/index.js'));
	({ StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js'));
} catch (e) {
	console.error('the MCP SDK is not installed (run scripts/deps.sh): ' + e.message);
	process.exit(1);
}

if (process.geteuid() !== 0) {
	console.log('skipped: airlockd must start as root');
	process.exit(77);
}

// The host uid range meson hands the test (tests/meson.build); the one a
// run by hand uses otherwise (tests/lib/airlock_testlib.py).
const UID_BASE = Number(process.env.AIRLOCK_TEST_UID_BASE || 2000000);
const UID_COUNT = Number(process.env.AIRLOCK_TEST_UID_COUNT || 2048);
const CLI = process.env.AIRLOCK_CLI;
const AIRLOCKD = process.env.AIRLOCKD;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Start airlockd as nobody on sock with config conf, its log appended to
// logPath. It dies with this test, even when the test is killed (issue 13,
// finding 8): setpriv sets PR_SET_PDEATHSIG and execs airlockd in the same
// process (node cannot run code between fork and exec). It fires when the
// thread that forked ends: libuv spawns from the main thread.
function startDaemon(sock, conf, logPath) {
	const log = fs.openSync(logPath, 'a');
	const daemon = spawn('setpriv', ['--pdeathsig', 'KILL', AIRLOCKD, '--foreground', '--user',
		'nobody', '--socket', sock, '--config', conf], { stdio: ['ignore', log, log] });
	fs.closeSync(log);
	return daemon;
}

// The airlock command on sock, its output as strings.
function cli(sock, ...args) {
	return spawnSync(CLI, ['--socket', sock, ...args], { encoding: 'utf8' });
}

// Poll pred (maybe async) every 100 ms until it holds; fail with what once
// ms have passed: a deadline for an event, never a fixed wait.
async function waitFor(pred, ms, what, every = 100) {
	const deadline = Date.now() + ms;
	while (!(await pred())) {
		assert.ok(Date.now() < deadline, what);
		await sleep(every);
	}
}

// The text blocks of a tool result, joined.
function text(result) {
	return result.content.filter((b) => b.type === 'text').map((b) => b.text).join('\n');
}

// An SDK client of `airlock --socket sock mcp` named name; its stderr is
// kept (client.stderrText()), its pid is client.pid.
async function connect(name, sock) {
	const stderr = [];
	const transport = new StdioClientTransport({ command: CLI, args: ['--socket', sock, 'mcp'],
		stderr: 'pipe' });
	transport.stderr.on('data', (d) => stderr.push(d.toString()));
	const client = new Client({ name, version: '1' });
	await client.connect(transport);
	client.stderrText = () => stderr.join('');
	client.pid = transport.pid;
	return client;
}

module.exports = { UID_BASE, UID_COUNT, CLI, AIRLOCKD, sleep, startDaemon, cli, waitFor, text,
	connect };
