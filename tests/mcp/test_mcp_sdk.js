// test_mcp_sdk.js: `airlock mcp` driven by the official MCP TypeScript SDK
// client (@modelcontextprotocol/sdk, pinned in scripts/deps.sh), against a
// real airlockd started as root on a private socket.
//
// What real clients need (issue 16): five parallel calls finish in about the
// time of one; a 90 s run completes for a client that sends a progressToken
// and resets its timeout on progress; a client that closes during a run
// leaves no session behind; links in results can be read (resources/read) or
// are not given; the output budget holds; tool errors, titles, annotations,
// output schemas (the SDK validates structuredContent against them).
//
// Run by meson (suite "mcp") with AIRLOCK_CLI, AIRLOCKD and NODE_PATH set.
// Exit 77 (skipped) when not root.
'use strict';

const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
// The SDK, the root check, the daemon's start, cli, waitFor, text, connect.
const sdk = require('../lib/mcp_sdk.js');

const { UID_BASE, UID_COUNT, waitFor, text } = sdk;
const t0 = Date.now();
const since = (t) => ((Date.now() - t) / 1000).toFixed(2);
const log = (...a) => console.log(`[${since(t0)} s]`, ...a);

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-mcp-sdk-'));
fs.chmodSync(dir, 0o755);
const socket = path.join(dir, 'airlock.sock');
// Two daemons share the test's uid range, half each: the second's default
// profile allows background processes (issue 30, point 4).
const HALF = Math.floor(UID_COUNT / 2);
fs.writeFileSync(path.join(dir, 'airlockd.conf'),
	`[daemon]\nmax_runs = 8\n[sandbox]\nuid_base = ${UID_BASE}\nuid_count = ${HALF}\n`);
fs.writeFileSync(path.join(dir, 'bg.conf'),
	`[sandbox]\nuid_base = ${UID_BASE + HALF}\nuid_count = ${HALF}\n` +
	'[access]\ndefault_profile = bg\n[profile bg]\nbackground_processes = true\nwall_ms = 60000\n');
const bgSocket = path.join(dir, 'bg.sock');
const daemon = sdk.startDaemon(socket, path.join(dir, 'airlockd.conf'), path.join(dir, 'airlockd.log'));
const bgDaemon = sdk.startDaemon(bgSocket, path.join(dir, 'bg.conf'), path.join(dir, 'bg.log'));

function cli(...args) {
	return sdk.cli(socket, ...args);
}

const clients = [];

async function connect(name, sock = socket) {
	const client = await sdk.connect(name, sock);
	clients.push(client);
	return client;
}

async function main() {
	await waitFor(() => cli('ping').status === 0, 10000, 'airlockd did not start');
	const client = await connect('sdk-test');
	assert.equal(client.getServerVersion().name, 'airlock');
	assert.ok(client.getServerCapabilities().resources, 'resources capability');

	// The 90 s run starts first and goes on while everything else is tested.
	const progress = [];
	const tLong = Date.now();
	const long = client.callTool({ name: 'run_python', arguments: {
		code: 'import time\nprint("started", flush=True)\ntime.sleep(90)\nprint("done after 90 s")',
		timeout_seconds: 100 } }, undefined,
	{ onprogress: (p) => progress.push(p), resetTimeoutOnProgress: true, timeout: 60000,
		maxTotalTimeout: 200000 }).then((r) => ({ r, secs: since(tLong) }));

	// tools/list: titles, annotations, output schemas, what Python offers.
	const { tools } = await client.listTools();
	const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
	for (const n of ['run_python', 'run_shell', 'session_open', 'session_close', 'write_file',
		'read_file', 'list_files']) {
		assert.ok(byName[n], n);
		assert.ok(byName[n].title, `${n} has a title`);
		assert.equal(byName[n].annotations.openWorldHint, false);
	}
	assert.equal(byName.read_file.annotations.readOnlyHint, true);
	assert.equal(byName.session_close.annotations.destructiveHint, true);
	assert.ok(byName.run_python.outputSchema, 'run_python has an outputSchema');
	assert.match(byName.run_python.description, /Environment: Python 3\.\d+/);
	assert.match(byName.run_python.description, /no pip install/);
	assert.ok(byName.run_python.inputSchema.properties.cpu_seconds);
	log('tools/list ok');

	// Five parallel 2 s calls finish in about the time of one; ping and
	// tools/list are answered meanwhile.
	const tPar = Date.now();
	const five = [0, 1, 2, 3, 4].map((i) => client.callTool({ name: 'run_python', arguments: {
		code: `import time\ntime.sleep(2)\nprint("call ${i}")` } })
		.then((r) => ({ r, secs: since(tPar) })));
	const tPing = Date.now();
	await client.ping();
	await client.listTools();
	const pingSecs = since(tPing);
	const done = await Promise.all(five);
	done.forEach(({ r }, i) => {
		assert.equal(r.isError, false, text(r));
		assert.match(text(r), new RegExp(`call ${i}`));
		assert.equal(r.structuredContent.outcome, 'exited');
		assert.equal(r.structuredContent.exit_code, 0);
	});
	const times = done.map((d) => d.secs);
	log(`five parallel 2 s calls answered at ${times.join(', ')} s; ping + tools/list meanwhile in ${pingSecs} s`);
	assert.ok(Math.max(...times) < 4, `parallel calls took ${times}`);
	assert.ok(pingSecs < 1.5, `ping waited ${pingSecs} s behind the runs`);

	// Bad arguments: a tool error the model can read (2025-11-25), not -32602.
	let r = await client.callTool({ name: 'run_python', arguments: { code: 5 } });
	assert.equal(r.isError, true);
	assert.match(text(r), /argument 'code' must be a string/);

	// CPU limit: raised with cpu_seconds, and by timeout_seconds alone (60 s of
	// wall for 6 s of cpu: at load 12 on 2 cores a run gets a sixth of a core).
	r = await client.callTool({ name: 'run_python', arguments: { code: 'while True: pass',
		timeout_seconds: 5, cpu_seconds: 1 } });
	assert.equal(r.isError, true);
	assert.match(text(r), /CPU-time limit of 1 s exceeded/);
	r = await client.callTool({ name: 'run_python', arguments: {
		code: 'import time\nwhile time.process_time() < 6: pass\nprint("6 s of CPU")',
		timeout_seconds: 60 } });
	assert.equal(r.isError, false, text(r));
	assert.match(text(r), /6 s of CPU/);
	log('limits ok');

	// The output budget: 300 KB of output come back as head and tail within it.
	r = await client.callTool({ name: 'run_python', arguments: {
		code: 'print("first line")\nprint("x" * 300000)\nprint("last line")' } });
	const size = JSON.stringify(r.content).length;
	assert.ok(size < 41000, `result of ${size} bytes`);
	assert.match(text(r), /first line/);
	assert.match(text(r), /last line/);
	assert.match(text(r), /\[\.\.\. \d+ bytes cut \.\.\.\]/);
	assert.equal(r.structuredContent.output_cut, true);
	log(`output budget ok (${size} bytes of content for 300 KB of output)`);

	// SVG is no image content (model APIs refuse it): an embedded resource.
	r = await client.callTool({ name: 'run_python', arguments: {
		code: 'open("plot.svg", "w").write("<svg xmlns=\'http://www.w3.org/2000/svg\'></svg>")' } });
	assert.equal(r.content.filter((b) => b.type === 'image').length, 0);
	const svg = r.content.find((b) => b.type === 'resource');
	assert.equal(svg.resource.mimeType, 'image/svg+xml');

	// Big text is embedded cut, within the budget.
	r = await client.callTool({ name: 'run_python', arguments: {
		code: 'open("big.txt", "w").write("y" * 200000)' } });
	const bigText = r.content.find((b) => b.type === 'resource');
	assert.match(bigText.resource.text, /\[\.\.\. file truncated: \d+ bytes more \.\.\.\]/);
	assert.ok(JSON.stringify(r.content).length < 41000);
	// Links: a one-shot run's big binary file is not linked (it is gone); a
	// session's is, and resources/read serves it.
	const big = 'open("big.bin", "wb").write(bytes(200000))';
	r = await client.callTool({ name: 'run_python', arguments: { code: big } });
	assert.equal(r.content.filter((b) => b.type === 'resource_link').length, 0);
	assert.match(text(r), /not included/);
	r = await client.callTool({ name: 'session_open', arguments: {} });
	const sid = r.structuredContent.session;
	assert.match(sid, /^[0-9a-f]{32}$/);
	r = await client.callTool({ name: 'run_python', arguments: { code: big, session: sid } });
	const link = r.content.find((b) => b.type === 'resource_link');
	assert.ok(link, JSON.stringify(r.content).slice(0, 2000));
	assert.equal(link.uri, `airlock://session/${sid}/big.bin`);
	const read = await client.readResource({ uri: link.uri });
	assert.equal(Buffer.from(read.contents[0].blob, 'base64').length, 200000);
	await assert.rejects(client.readResource({ uri: `airlock://session/${sid}/nope.txt` }),
		/not found/);
	const templates = await client.listResourceTemplates();
	assert.equal(templates.resourceTemplates[0].uriTemplate, 'airlock://session/{session}/{+path}');
	r = await client.callTool({ name: 'list_files', arguments: { session: sid } });
	assert.deepEqual(r.structuredContent.entries.map((e) => e.name), ['big.bin']);
	log('resources ok');

	// Cells (issue 30, points 2 and 3): the runtime and the profile the
	// interpreter starts with; its session named, the cells' files read in
	// it; rich output as images and labelled text.
	r = await client.callTool({ name: 'run_python_cell', arguments: { runtime: 'python-site',
		profile: 'generous', timeout_seconds: 30,
		code: 'import sys\nopen("cell.txt", "w").write("from a cell")\nsys.flags.no_site' } });
	assert.equal(r.isError, false, text(r));
	assert.equal(r.structuredContent.value, '0');
	const cellSid = r.structuredContent.session;
	assert.match(cellSid, /^[0-9a-f]{32}$/);
	assert.match(text(r), new RegExp(`cell 1 of session ${cellSid}`));
	assert.match(text(r), /files created or changed in the session: cell\.txt \(11 bytes\)/);
	r = await client.callTool({ name: 'read_file', arguments: { session: cellSid, path: 'cell.txt' } });
	assert.match(text(r), /from a cell/);
	r = await client.callTool({ name: 'run_python_cell', arguments: {
		code: 'class H:\n    def _repr_html_(self):\n        return "<i>h</i>"\nH()' } });
	assert.match(text(r), /display 1 \(text\/html\):\n<i>h<\/i>/);
	if (spawnSync('/usr/bin/python3', ['-c', 'import matplotlib']).status === 0) {
		r = await client.callTool({ name: 'run_python_cell', arguments: { timeout_seconds: 60,
			cpu_seconds: 30, code: 'import matplotlib.pyplot as plt\nplt.plot([1, 3, 2])\n' +
			'plt.show()\nplt.close("all")' } });
		const img = r.content.filter((b) => b.type === 'image');
		assert.equal(img.length, 1, text(r));
		assert.equal(img[0].mimeType, 'image/png');
	} else {
		log('cells: no matplotlib on this host, plt.show() not tried');
	}
	// A plain run's figures (issue 30): shown and left open, as images;
	// figure_format svg as an embedded SVG; another word refused.
	if (spawnSync('/usr/bin/python3', ['-c', 'import matplotlib']).status === 0) {
		r = await client.callTool({ name: 'run_python', arguments: { timeout_seconds: 60,
			cpu_seconds: 30, runtime: 'python-site', code: 'import matplotlib.pyplot as plt\n' +
			'plt.plot([1, 3, 2]); plt.show(); plt.close("all")\nplt.figure(); plt.bar([1], [2])\n' } });
		assert.equal(r.isError, false, text(r));
		const img = r.content.filter((b) => b.type === 'image');
		assert.equal(img.length, 2, text(r));
		assert.ok(img.every((b) => b.mimeType === 'image/png'));
		assert.ok(Buffer.from(img[0].data, 'base64').subarray(0, 4).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47])));
		r = await client.callTool({ name: 'run_python', arguments: { timeout_seconds: 60,
			cpu_seconds: 30, runtime: 'python-site', figure_format: 'svg',
			code: 'import matplotlib.pyplot as plt\nplt.plot([1])\n' } });
		assert.equal(r.isError, false, text(r));
		const svg = r.content.filter((b) => b.type === 'resource');
		assert.equal(svg.length, 1, text(r));
		assert.equal(svg[0].resource.mimeType, 'image/svg+xml');
	} else {
		log('runs: no matplotlib on this host, figures not tried');
	}
	r = await client.callTool({ name: 'run_python', arguments: { code: '1', figure_format: 'gif' } });
	assert.equal(r.isError, true);
	assert.match(text(r), /figure_format' must be "png" or "svg"/);
	r = await client.callTool({ name: 'run_python_cell', arguments: { code: '1', runtime: 'python' } });
	assert.equal(r.isError, true);
	assert.match(text(r), /call reset_python first/);
	r = await client.callTool({ name: 'reset_python', arguments: {} });
	assert.equal(r.isError, false, text(r));
	r = await client.callTool({ name: 'session_open', arguments: { profile: 'minimal' } });
	assert.match(text(r), /opened with profile minimal/);
	r = await client.callTool({ name: 'run_python', arguments: { session: r.structuredContent.session,
		code: 'x = bytearray(200 << 20)\nx[::4096] = b"1" * len(x[::4096])' } });
	assert.equal(r.structuredContent.outcome, 'memory_limit', text(r));
	log('cells ok');

	// A client that closes during a run leaves no session: the SDK's close()
	// ends stdin, then sends SIGTERM after 2 s.
	const other = await connect('sdk-close');
	r = await other.callTool({ name: 'session_open', arguments: {} });
	const closing = r.structuredContent.session;
	other.callTool({ name: 'run_shell', arguments: { command: 'sleep 60', session: closing,
		timeout_seconds: 70 } }).catch(() => {});
	other.callTool({ name: 'run_shell', arguments: { command: 'sleep 60', timeout_seconds: 70 } })
		.catch(() => {});
	// Both runs under way (ps lists them), not a fixed wait.
	const shRuns = () => JSON.parse(cli('--json', 'ps').stdout).filter((p) => p.runtime === 'sh');
	await waitFor(() => shRuns().length === 2, 30000, 'the two sleep 60 runs did not start');
	let ls = JSON.parse(cli('--json', 'session', 'ls').stdout);
	assert.ok(ls.some((s) => s.id === closing), 'the session is open during the run');
	const tClose = Date.now();
	await other.close();
	const closeSecs = since(tClose);
	ls = JSON.parse(cli('--json', 'session', 'ls').stdout);
	assert.ok(!ls.some((s) => s.id === closing), `session ${closing} left open: ${JSON.stringify(ls)}`);
	assert.match(other.stderrText(), /closed session/);
	log(`close during a run: server gone in ${closeSecs} s, its session closed`);
	// Its runs end with it: within 10 s, the deadline of an event.
	await waitFor(() => shRuns().length === 0, 10000,
		`the closed client's runs go on: ${JSON.stringify(shRuns())}`);

	// Issue 30: notifications/cancelled of a run_python_cell call (the SDK
	// sends it when the call's signal aborts) interrupts the cell, as its
	// wall limit does: the interpreter keeps x. Before, the daemon answered
	// the cancel not_found and the cell ran on to its limit (10 s), the
	// next cell waiting behind it.
	const cellc = await connect('sdk-cancel');
	r = await cellc.callTool({ name: 'run_python_cell', arguments: { code: 'x = 7' } });
	assert.equal(r.isError, false, text(r));
	ls = JSON.parse(cli('--json', 'session', 'ls').stdout);
	const interp = ls.filter((s) => s.interpreter);
	assert.equal(interp.length, 1, JSON.stringify(ls));
	const abort = new AbortController();
	const loopCell = cellc.callTool({ name: 'run_python_cell', arguments: { code:
		'import time\nopen("started", "w").close()\nwhile True:\n    time.sleep(0.01)' } },
	undefined, { signal: abort.signal });
	await waitFor(() => cli('get', interp[0].id, 'started', '-').status === 0, 30000,
		'the cell did not start', 5);
	const tCancel = Date.now();
	abort.abort('test');
	await assert.rejects(loopCell);
	r = await cellc.callTool({ name: 'run_python_cell', arguments: { code: 'x' } });
	const cancelSecs = since(tCancel);
	assert.equal(r.isError, false, text(r));
	assert.match(text(r), /\b7\b/);
	assert.ok(cancelSecs < 2, `the next cell came ${cancelSecs} s after the cancel`);
	assert.match(cellc.stderrText() + fs.readFileSync(path.join(dir, 'airlockd.log'), 'utf8'),
		/cell 2: cancelled \(interrupted\)/);
	log(`run_python_cell cancelled: the next cell (x kept) ${cancelSecs} s after the cancel`);
	// Background processes (issue 30, point 4): refused by this daemon's
	// default profile; on the second daemon, whose profile allows them, a
	// server started in one cell answers the next; reset_python without
	// background ends it.
	r = await client.callTool({ name: 'reset_python', arguments: { background: 'yes' } });
	assert.equal(r.isError, true);
	assert.match(text(r), /argument 'background' must be true or false/);
	r = await client.callTool({ name: 'reset_python', arguments: { background: true } });
	assert.equal(r.isError, false, text(r));
	r = await client.callTool({ name: 'run_python_cell', arguments: { code: '1' } });
	assert.equal(r.isError, true);
	assert.match(text(r), /does not allow background processes/);
	await client.callTool({ name: 'reset_python', arguments: {} });
	assert.ok(byName.reset_python.inputSchema.properties.background, 'reset_python takes background');
	await waitFor(() => cli('--socket', bgSocket, 'ping').status === 0, 10000,
		'the second airlockd did not start');
	const bg = await connect('sdk-background', bgSocket);
	r = await bg.callTool({ name: 'reset_python', arguments: { background: true } });
	assert.match(text(r), /keep running between cells/);
	const serve = 'import subprocess, sys\nopen("hi.txt", "w").write("hi from cell 1")\n' +
		'srv = subprocess.Popen([sys.executable, "-m", "http.server", "8000", "--bind", ' +
		'"127.0.0.1"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\nsrv.pid > 0';
	const fetch = 'import time, urllib.request\nend = time.monotonic() + 50\nwhile True:\n' +
		'    try:\n        print(urllib.request.urlopen("http://127.0.0.1:8000/hi.txt", ' +
		'timeout=5).read().decode())\n        break\n    except OSError as e:\n' +
		'        if time.monotonic() > end:\n            print("refused", e)\n            break\n' +
		'        time.sleep(0.05)';
	r = await bg.callTool({ name: 'run_python_cell', arguments: { code: serve } });
	assert.equal(r.isError, false, text(r));
	r = await bg.callTool({ name: 'run_python_cell', arguments: { code: fetch } });
	assert.match(text(r), /hi from cell 1/);
	const bgLs = JSON.parse(cli('--socket', bgSocket, '--json', 'session', 'ls').stdout);
	assert.equal(bgLs.filter((s) => s.background === true).length, 1, JSON.stringify(bgLs));
	// Listed with cpu and memory, and stopped one by one.
	r = await bg.callTool({ name: 'list_processes', arguments: {} });
	assert.equal(r.isError, false, text(r));
	const procs = r.structuredContent.processes;
	assert.equal(procs.length, 1, JSON.stringify(procs));
	assert.equal(procs[0].name, 'python3');
	assert.ok(procs[0].memory_bytes > 1 << 20, JSON.stringify(procs));
	assert.match(text(r), /pid \d+ python3: cpu [\d.]+ s, memory \d+ bytes/);
	r = await bg.callTool({ name: 'stop_process', arguments: { pid: 1 } });
	assert.equal(r.isError, true);
	assert.match(text(r), /interpreter or its supervisor/);
	r = await bg.callTool({ name: 'stop_process', arguments: { pid: 'x' } });
	assert.equal(r.isError, true);
	r = await bg.callTool({ name: 'stop_process', arguments: { pid: procs[0].pid } });
	assert.equal(r.isError, false, text(r));
	assert.deepEqual(r.structuredContent.processes, []);
	r = await bg.callTool({ name: 'run_python_cell', arguments: { code: fetch.replace('+ 50', '+ 1') } });
	assert.match(text(r), /refused/);
	r = await client.callTool({ name: 'list_processes', arguments: {} });
	assert.equal(r.isError, true);
	assert.match(text(r), /no Python interpreter with background processes/);
	await bg.callTool({ name: 'reset_python', arguments: {} });
	r = await bg.callTool({ name: 'run_python_cell', arguments: { code: serve.replace('8000', '8001') } });
	r = await bg.callTool({ name: 'run_python_cell', arguments: { code: fetch.replace('8000', '8001').replace('+ 50', '+ 1') } });
	assert.match(text(r), /refused/);
	log('background processes ok');

	// The 90 s run.
	const { r: lr, secs } = await long;
	assert.equal(lr.isError, false, text(lr));
	assert.match(text(lr), /done after 90 s/);
	assert.ok(progress.length >= 60, `${progress.length} progress notifications`);
	assert.ok(progress.some((p) => /started/.test(p.message || '')));
	log(`90 s run answered after ${secs} s with ${progress.length} progress notifications`);

	await client.close();
}

main().then(() => {
	log('ok');
}, (e) => {
	console.error(e);
	process.exitCode = 1;
}).finally(async () => {
	await Promise.all(clients.map((c) => c.close().catch(() => {})));
	bgDaemon.kill('SIGTERM');
	daemon.kill('SIGTERM');
	const timer = setTimeout(() => daemon.kill('SIGKILL'), 10000);
	daemon.on('exit', () => {
		clearTimeout(timer);
		if (process.exitCode) {
			try {
				console.error(fs.readFileSync(path.join(dir, 'airlockd.log'), 'utf8').slice(-3000));
				console.error(fs.readFileSync(path.join(dir, 'bg.log'), 'utf8').slice(-3000));
			} catch (e) { /* nothing */ }
		}
		fs.rmSync(dir, { recursive: true, force: true });
		process.exit();
	});
});
