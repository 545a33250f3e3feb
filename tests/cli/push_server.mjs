// Loopback profile stores for tests/cli/test_push.sh, decoding with code firn did not write.
//   node push_server.mjs parca PORT OUTDIR NPM_DIR  - gRPC over h2c (node's http2): each
//     WriteRaw request is decoded with @parca/client's WriteRawRequest.fromBinary (Parca's own
//     protobuf-ts code) and its raw profile with pprof-format; OUTDIR/N.json says what arrived,
//     OUTDIR/N.pb.gz is the raw profile. Answers an empty WriteRawResponse, grpc-status 0 in the
//     trailers (grpc-status 14, unavailable, to the first $FIRN_TEST_GRPC_FAIL requests).
//   node push_server.mjs http PORT OUTDIR  - HTTP/1.1: OUTDIR/N.body is each POST's body,
//     OUTDIR/N.json its path and headers (the test decodes them: protoc, go tool pprof).
// With FIRN_TEST_TLS_CERT and FIRN_TEST_TLS_KEY (PEM files) either speaks TLS only (parca: HTTP/2
// by ALPN), and a client that fails the handshake is a line of OUTDIR/tls_failed.
// OUTDIR/ready appears once the server listens. With FIRN_TEST_LISTEN_ON_SIGNAL=1 it listens only
// at SIGUSR1 (OUTDIR/loaded says it waits): a store that is down, then up, whatever node's
// start-up costs.
import { register } from 'node:module';
import fs from 'node:fs';
import http from 'node:http';
import http2 from 'node:http2';
import https from 'node:https';
import path from 'node:path';
import zlib from 'node:zlib';

const [mode, port, out, npmDir] = process.argv.slice(2);
let n = 0;
const grpcFail = Number(process.env.FIRN_TEST_GRPC_FAIL || 0);
const tls = process.env.FIRN_TEST_TLS_CERT ?
	{ cert: fs.readFileSync(process.env.FIRN_TEST_TLS_CERT), key: fs.readFileSync(process.env.FIRN_TEST_TLS_KEY) } : null;

// @parca/client's ESM files import siblings without ".js": resolve them as node 20 will not
function hook() {
	register('data:text/javascript,' + encodeURIComponent(`
export async function resolve(spec, ctx, next) {
	try { return await next(spec, ctx); } catch (e) {
		if (e.code === 'ERR_MODULE_NOT_FOUND' && /^\\.{1,2}\\//.test(spec)) return next(spec + '.js', ctx);
		throw e;
	}
}`));
}

// Listens on PORT now, or at SIGUSR1 (FIRN_TEST_LISTEN_ON_SIGNAL); OUTDIR/ready once it does.
function listen(server) {
	server.on('tlsClientError', (e) => fs.appendFileSync(`${out}/tls_failed`, `${e.code || e}\n`));
	const go = () => server.listen(Number(port), '127.0.0.1', () => fs.writeFileSync(`${out}/ready`, ''));
	if (process.env.FIRN_TEST_LISTEN_ON_SIGNAL !== '1')
		return go();
	const idle = setInterval(() => {}, 1 << 30); // nothing else keeps node alive until then
	process.once('SIGUSR1', () => { clearInterval(idle); go(); });
	fs.writeFileSync(`${out}/loaded`, '');
}

// The pprof's sample total (type "samples"), time, duration and function names, by pprof-format.
function pprofInfo(Profile, raw) {
	const bytes = raw[0] === 0x1f && raw[1] === 0x8b ? zlib.gunzipSync(raw) : raw;
	const p = Profile.decode(new Uint8Array(bytes));
	const str = (i) => p.stringTable.strings[Number(i)];
	const t = p.sampleType.findIndex((v) => str(v.type) === 'samples');
	let samples = 0n;
	for (const s of p.sample) samples += BigInt(s.value[t < 0 ? 0 : t]);
	return { samples: String(samples), time: String(p.timeNanos), duration: String(p.durationNanos),
		 functions: p.function.map((f) => str(f.name)) };
}

async function parca() {
	hook();
	const ps = await import(path.join(npmDir, 'node_modules/@parca/client/dist/parca/profilestore/v1alpha1/profilestore.js'));
	const { Profile } = await import(path.join(npmDir, 'node_modules/pprof-format/dist/esm/index.js'));
	const server = tls ? http2.createSecureServer(tls) : http2.createServer();
	server.on('stream', (stream, headers) => {
		const chunks = [];
		stream.on('data', (c) => chunks.push(c));
		stream.on('end', () => {
			const body = Buffer.concat(chunks), i = n++;
			const info = { path: headers[':path'], contentType: headers['content-type'], te: headers.te,
				       auth: headers.authorization || '' };
			try {
				if (body[0] !== 0 || body.readUInt32BE(1) !== body.length - 5)
					throw new Error(`bad gRPC frame: flag ${body[0]}, length ${body.readUInt32BE(1)} of ${body.length - 5}`);
				const req = ps.WriteRawRequest.fromBinary(new Uint8Array(body.subarray(5)));
				info.tenant = req.tenant;
				info.series = req.series.map((s) => ({
					labels: (s.labels?.labels || []).map((l) => `${l.name}=${l.value}`),
					samples: s.samples.length }));
				const raw = req.series[0].samples[0].rawProfile;
				fs.writeFileSync(`${out}/${i}.pb.gz`, raw);
				info.pprof = pprofInfo(Profile, Buffer.from(raw));
			} catch (e) {
				info.error = String(e);
			}
			fs.writeFileSync(`${out}/${i}.json`, JSON.stringify(info) + '\n');
			stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
			stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': info.error ? '3' : i < grpcFail ? '14' : '0' }));
			stream.end(Buffer.alloc(5)); // an empty WriteRawResponse
		});
	});
	listen(server);
}

function plain() {
	const handle = (req, res) => {
		const chunks = [];
		req.on('data', (c) => chunks.push(c));
		req.on('end', () => {
			const i = n++;
			fs.writeFileSync(`${out}/${i}.body`, Buffer.concat(chunks));
			fs.writeFileSync(`${out}/${i}.json`, JSON.stringify({ path: req.url, headers: req.headers }) + '\n');
			res.writeHead(200, { 'content-type': 'application/x-protobuf' });
			res.end();
		});
	};
	listen(tls ? https.createServer(tls, handle) : http.createServer(handle));
}

if (mode === 'parca') await parca(); else plain();
