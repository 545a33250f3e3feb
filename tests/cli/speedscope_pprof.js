// speedscope_pprof.js BUNDLE PROFILE: reads a pprof file (gzip or raw) with speedscope's own importer
// (importAsPprofProfile, inside its browser bundle, run under node with a stub DOM) and prints
// "self% total% name" per function name, in shares of the profile's total weight (test_speedscope.sh).
const fs = require("fs"), zlib = require("zlib"), vm = require("vm");
const [bundlePath, profilePath] = process.argv.slice(2);
let src = fs.readFileSync(bundlePath, "utf8");
// the importer, importAsPprofProfile in speedscope's source (src/import/pprof.ts), and the lazy
// initializer of its module (esbuild's __esm), which sets up the protobuf decoder it uses
const hook = /function ([A-Za-z_$][\w$]*)\(t\)\{if\(t\.byteLength===0\)return null;let e;try\{e=([\w$]+)\.perftools\.profiles\.Profile\.decode/;
const m = src.match(hook);
if (!m) { console.error("speedscope's pprof importer not found in the bundle"); process.exit(2); }
const dec = m[2].replace(/\$/g, "\\$");
const init = src.match(new RegExp(`var ${dec},[\\w$,]*?([\\w$]+)=[\\w$]+\\(\\(\\)=>\\{"use strict";${dec}=`));
if (!init) { console.error("the importer's module initializer not found in the bundle"); process.exit(2); }
src = src.replace(m[0], `globalThis.__firnImportPprof=(...a)=>(${init[1]}(),${m[1]}(...a));` + m[0]);
// a DOM that absorbs everything: any property, call or construction gives the stub back
const stub = new Proxy(function () {}, {
	get: (t, k) => k === Symbol.toPrimitive ? () => 0 : k === "then" ? undefined : stub,
	apply: () => stub, construct: () => stub, set: () => true, has: () => true,
});
const ctx = { console: { log() {}, warn() {}, error() {} }, setTimeout, clearTimeout, Promise,
	TextDecoder, TextEncoder, Uint8Array, ArrayBuffer, DataView, Map, Set, WeakMap, Math, JSON,
	Object, Array, String, Number, Symbol, Error, TypeError, RegExp, Date, Reflect, Proxy,
	BigInt, Int32Array, Float64Array, Uint32Array, Uint16Array, Int8Array, Float32Array };
ctx.window = ctx; // unknown globals stay undefined: protobufjs then uses its own Long
ctx.document = stub; ctx.navigator = stub; ctx.location = stub; ctx.self = ctx.window;
ctx.globalThis = ctx;
vm.createContext(ctx);
try { vm.runInContext(src, ctx); } catch (e) { /* the app's start-up: only the importer matters */ }
if (!ctx.__firnImportPprof) { console.error("the importer hook did not run"); process.exit(2); }
let buf = fs.readFileSync(profilePath);
if (buf[0] === 0x1f && buf[1] === 0x8b) buf = zlib.gunzipSync(buf);
const ab = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.length);
const prof = ctx.__firnImportPprof(ab);
if (!prof) { console.error("speedscope could not import the profile"); process.exit(1); }
const total = prof.getTotalWeight();
const rows = new Map();
prof.forEachFrame(f => {
	const r = rows.get(f.name) || [0, 0];
	r[0] += f.getSelfWeight(); r[1] += f.getTotalWeight();
	rows.set(f.name, r);
});
console.log(`# total ${total}`);
for (const [name, [s, t]] of rows)
	console.log(`${(100 * s / total).toFixed(3)} ${(100 * t / total).toFixed(3)} ${name}`);
