// test_persist_mcp.js: session leases and workspace archives through
// `airlock mcp`, driven by the official MCP TypeScript SDK client
// (@modelcontextprotocol/sdk, as tests/mcp/test_mcp_sdk.js), against a real
// airlockd with a state_directory (issue 30, point 5):
// - session_save returns the workspace as a tar (an embedded resource,
//   application/x-tar, base64) with the file written, a planted link left out;
// - session_open with that archive starts a session whose read_file has it,
//   with a profile too (and none under a profile the daemon lacks);
// - a hostile archive (a symbolic link to /etc/passwd) or bad base64 is an
//   error, and no session is opened;
// - session_extend keeps a 2 s session past a twin's end, and a restart of
//   the daemon keeps the session and its file;
// - past the daemon's lifetime maximum: an error result.
// Run by meson (suite "integration") with AIRLOCK_CLI, AIRLOCKD and NODE_PATH.
'use strict';

const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
// The SDK, the root check, the daemon's start, cli, waitFor, text, connect.
const sdk = require('../lib/mcp_sdk.js');

const { UID_BASE, UID_COUNT, waitFor, text } = sdk;

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-persist-mcp-'));
fs.chmodSync(dir, 0o755);
const socket = path.join(dir, 'airlock.sock');
fs.writeFileSync(path.join(dir, 'airlockd.conf'),
	`[sessions]\nstate_directory = ${dir}/state\n` +
	`[sandbox]\nuid_base = ${UID_BASE}\nuid_count = ${UID_COUNT}\n`);
let daemon = null;

function startDaemon() {
	daemon = sdk.startDaemon(socket, path.join(dir, 'airlockd.conf'), path.join(dir, 'airlockd.log'));
}

async function stopDaemon() {
	const exited = new Promise((r) => daemon.on('exit', r));
	daemon.kill('SIGTERM');
	await exited;
}

function cli(...args) {
	return sdk.cli(socket, ...args);
}

function connect() {
	return sdk.connect('persist-test', socket);
}

function listed() {
	const r = cli('--json', 'session', 'ls');
	return r.status === 0 ? JSON.parse(r.stdout) : [];
}

async function main() {
	startDaemon();
	await waitFor(() => cli('ping').status === 0, 10000, 'airlockd did not start');
	const client = await connect();
	const tools = (await client.listTools()).tools.map((t) => t.name);
	for (const n of ['session_save', 'session_extend'])
		assert.ok(tools.includes(n), `${n} listed`);

	// save: a tar with the file, the link left out.
	let r = await client.callTool({ name: 'session_open', arguments: {} });
	const sid = r.structuredContent.session;
	r = await client.callTool({ name: 'write_file', arguments: { session: sid, path: 'notes.txt',
		content: 'kept by mcp' } });
	assert.equal(r.isError, false, text(r));
	r = await client.callTool({ name: 'run_shell', arguments: { session: sid,
		command: 'ln -s /etc/passwd /workspace/lnk' } });
	r = await client.callTool({ name: 'session_save', arguments: { session: sid } });
	assert.equal(r.isError, false, text(r));
	const res = r.content.find((b) => b.type === 'resource').resource;
	assert.equal(res.mimeType, 'application/x-tar');
	const tar = Buffer.from(res.blob, 'base64');
	assert.equal(tar.subarray(0, 9).toString(), 'notes.txt');
	assert.equal(tar.subarray(257, 262).toString(), 'ustar');
	assert.equal(tar.subarray(512, 523).toString(), 'kept by mcp');
	assert.ok(!tar.includes('lnk'), 'the link is left out');

	// open from it.
	r = await client.callTool({ name: 'session_open', arguments: { archive: res.blob } });
	assert.equal(r.isError, false, text(r));
	const copy = r.structuredContent.session;
	r = await client.callTool({ name: 'read_file', arguments: { session: copy, path: 'notes.txt' } });
	assert.match(text(r), /kept by mcp/);
	// With a profile too (main's session_open took profile, this branch
	// archive): both apply; a profile the daemon does not have opens nothing.
	r = await client.callTool({ name: 'session_open', arguments: { archive: res.blob,
		profile: 'default' } });
	assert.equal(r.isError, false, text(r));
	assert.match(text(r), /with profile default/);
	const profiled = r.structuredContent.session;
	r = await client.callTool({ name: 'read_file', arguments: { session: profiled,
		path: 'notes.txt' } });
	assert.match(text(r), /kept by mcp/);
	// Closed: the daemon's sessions per uid (4 as shipped) are needed below.
	r = await client.callTool({ name: 'session_close', arguments: { session: profiled } });
	assert.equal(r.isError, false, text(r));
	const opened = listed().length;
	r = await client.callTool({ name: 'session_open', arguments: { archive: res.blob,
		profile: 'nope' } });
	assert.equal(r.isError, true, text(r));
	assert.equal(listed().length, opened, 'no session opened under a missing profile');

	// hostile: a symlink entry (made by python's tarfile), and bad base64.
	const before = listed().length;
	const evil = spawnSync('python3', ['-c',
		'import io,tarfile,sys,base64\nb=io.BytesIO()\nt=tarfile.open(fileobj=b,mode="w",format=tarfile.USTAR_FORMAT)\n' +
		'i=tarfile.TarInfo("passwd");i.type=tarfile.SYMTYPE;i.linkname="/etc/passwd";t.addfile(i);t.close()\n' +
		'sys.stdout.write(base64.b64encode(b.getvalue()).decode())'], { encoding: 'utf8' }).stdout;
	r = await client.callTool({ name: 'session_open', arguments: { archive: evil } });
	assert.equal(r.isError, true);
	assert.match(text(r), /a link/);
	// Invalid arguments: an error result or invalid params, by the client's protocol version.
	r = await client.callTool({ name: 'session_open', arguments: { archive: 'not base64!' } })
		.catch((e) => ({ isError: true, content: [{ type: 'text', text: e.message }] }));
	assert.equal(r.isError, true);
	assert.match(text(r), /base64/);
	assert.equal(listed().length, before, 'no session opened by a refused archive');

	// extend: a twin of 2 s ends, the extended one stays.
	const short = JSON.parse(cli('--json', 'session', 'open', '--lifetime', '2').stdout).id;
	const kept = JSON.parse(cli('--json', 'session', 'open', '--lifetime', '2').stdout).id;
	r = await client.callTool({ name: 'session_extend', arguments: { session: kept, seconds: 600 } });
	assert.equal(r.isError, false, text(r));
	await waitFor(() => !listed().some((s) => s.id === short), 20000, 'the twin did not end');
	assert.ok(listed().some((s) => s.id === kept), 'the extended session stays');
	r = await client.callTool({ name: 'session_extend', arguments: { session: kept,
		seconds: 2 * 86400 } });
	assert.equal(r.isError, true);
	assert.match(text(r), /too_large|at most/);

	// A restart keeps the MCP session and its file; the server (which closes
	// its sessions when its client leaves) reconnects on its next call.
	await stopDaemon();
	startDaemon();
	await waitFor(() => listed().some((s) => s.id === copy && s.state === 'idle'), 20000,
		'the session did not come back');
	r = await client.callTool({ name: 'read_file', arguments: { session: copy, path: 'notes.txt' } });
	assert.match(text(r), /kept by mcp/);
	await client.close();
}

main().then(() => {
	console.log('ok');
}, (e) => {
	console.error(e);
	process.exitCode = 1;
}).finally(() => {
	const done = () => {
		if (process.exitCode) {
			try {
				console.error(fs.readFileSync(path.join(dir, 'airlockd.log'), 'utf8').slice(-3000));
			} catch (e) { /* nothing */ }
		}
		fs.rmSync(dir, { recursive: true, force: true });
		process.exit();
	};
	if (daemon === null || daemon.exitCode !== null)
		return done();
	daemon.on('exit', done);
	daemon.kill('SIGTERM');
	setTimeout(() => daemon.kill('SIGKILL'), 10000);
});
