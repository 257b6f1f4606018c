#!/usr/bin/env node
// Run an ONNX model with onnxruntime-node (CPU) on .npy inputs: the
// reference of tests/models and bench/bench_models.
//
//   node ort_run.js MODEL.onnx [--input NAME=FILE.npy]... [--output NAME=FILE.npy]...
//        [--bench SECONDS] [--min-iterations N] [--threads N] [--json]
//
// onnxruntime-node is looked up in $IPU_NPM_DIR/node_modules (default
// ~/.cache/ipu-stack/npm, where scripts/install-npm puts it) and then by
// node's usual search.  Inputs not given are an error (the test always
// gives them).  --bench times sequential session.run calls for at least
// SECONDS (and --min-iterations) after two warm-up runs and reports
// requests/s.  --json prints one JSON object.
'use strict';
const fs = require('fs');
const path = require('path');
const os = require('os');

function loadOrt() {
  const dir = process.env.IPU_NPM_DIR || path.join(os.homedir(), '.cache', 'ipu-stack', 'npm');
  const cands = [path.join(dir, 'node_modules', 'onnxruntime-node'), 'onnxruntime-node'];
  for (const c of cands) {
    try { return require(c); } catch (e) { if (c === cands[cands.length - 1]) throw e; }
  }
}

const DT = {
  '<f4': ['float32', Float32Array, 4],
  '<f2': ['float16', Uint16Array, 2],
  '<i8': ['int64', BigInt64Array, 8],
  '<i4': ['int32', Int32Array, 4],
  '|u1': ['uint8', Uint8Array, 1],
  '|b1': ['bool', Uint8Array, 1],
  '|i1': ['int8', Int8Array, 1],
};

function readNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.toString('latin1', 0, 6) !== '\x93NUMPY') throw new Error(`${file}: not a .npy file`);
  const major = buf[6];
  const hlen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const hstart = major === 1 ? 10 : 12;
  const header = buf.toString('latin1', hstart, hstart + hlen);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  if (/'fortran_order':\s*True/.test(header)) throw new Error(`${file}: fortran order`);
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(',')
    .map((s) => s.trim()).filter((s) => s.length).map(Number);
  const dt = DT[descr];
  if (!dt) throw new Error(`${file}: dtype ${descr} not supported`);
  const n = shape.reduce((a, b) => a * b, 1);
  const off = hstart + hlen;
  const copy = Buffer.from(buf.subarray(off, off + n * dt[2]));  // aligned
  const data = new dt[1](copy.buffer, copy.byteOffset, n);
  return { type: dt[0], data, shape };
}

function writeNpy(file, t) {
  const m = { float32: '<f4', float16: '<f2', int64: '<i8', int32: '<i4', uint8: '|u1', bool: '|b1', int8: '|i1' };
  const descr = m[t.type];
  if (!descr) throw new Error(`output type ${t.type} not supported`);
  const shp = t.dims.length === 1 ? `(${t.dims[0]},)` : `(${t.dims.join(', ')})`;
  let h = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shp}, }`;
  const total = 10 + h.length + 1;
  h += ' '.repeat((64 - (total % 64)) % 64) + '\n';
  const pre = Buffer.alloc(10);
  pre.write('\x93NUMPY', 0, 'latin1');
  pre[6] = 1; pre[7] = 0;
  pre.writeUInt16LE(h.length, 8);
  const d = t.data;
  const body = Buffer.from(d.buffer, d.byteOffset, d.byteLength);
  fs.writeFileSync(file, Buffer.concat([pre, Buffer.from(h, 'latin1'), body]));
}

async function main() {
  const args = process.argv.slice(2);
  const o = { inputs: {}, outputs: {}, bench: 0, minIter: 5, threads: 0, json: false, model: null };
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    const kv = () => { const s = args[++i]; const e = s.indexOf('='); return [s.slice(0, e), s.slice(e + 1)]; };
    if (a === '--input') { const [k, v] = kv(); o.inputs[k] = v; }
    else if (a === '--output') { const [k, v] = kv(); o.outputs[k] = v; }
    else if (a === '--bench') o.bench = Number(args[++i]);
    else if (a === '--min-iterations') o.minIter = Number(args[++i]);
    else if (a === '--threads') o.threads = Number(args[++i]);
    else if (a === '--json') o.json = true;
    else if (!o.model) o.model = a;
    else throw new Error(`unknown argument ${a}`);
  }
  if (!o.model) throw new Error('usage: ort_run.js MODEL.onnx [--input N=F.npy]... [--output N=F.npy]...');
  const ort = loadOrt();
  const sopt = { graphOptimizationLevel: 'all', executionProviders: ['cpu'] };
  if (o.threads > 0) { sopt.intraOpNumThreads = o.threads; sopt.interOpNumThreads = 1; }
  const t0 = process.hrtime.bigint();
  const sess = await ort.InferenceSession.create(o.model, sopt);
  const loadMs = Number(process.hrtime.bigint() - t0) / 1e6;
  const feeds = {};
  for (const name of sess.inputNames) {
    if (!o.inputs[name]) throw new Error(`input ${name} not given (--input ${name}=FILE.npy)`);
    const a = readNpy(o.inputs[name]);
    feeds[name] = new ort.Tensor(a.type, a.data, a.shape);
  }
  let res = await sess.run(feeds);
  for (const [name, file] of Object.entries(o.outputs)) {
    if (!res[name]) throw new Error(`no output ${name} (outputs: ${sess.outputNames.join(', ')})`);
    writeNpy(file, res[name]);
  }
  const out = { model: o.model, ort_version: ort.env.versions ? ort.env.versions.node : '?',
    load_ms: loadMs, threads: o.threads || 'default',
    outputs: sess.outputNames.map((n) => ({ name: n, type: res[n].type, dims: res[n].dims })) };
  if (o.bench > 0) {
    await sess.run(feeds);
    let n = 0;
    const lat = [];
    const start = process.hrtime.bigint();
    let now = start;
    while (n < o.minIter || Number(now - start) / 1e9 < o.bench) {
      const s = process.hrtime.bigint();
      res = await sess.run(feeds);
      now = process.hrtime.bigint();
      lat.push(Number(now - s) / 1e3);
      n++;
    }
    const secs = Number(now - start) / 1e9;
    lat.sort((a, b) => a - b);
    out.iterations = n;
    out.req_per_s = n / secs;
    out.p50_us = lat[Math.floor(lat.length / 2)];
    out.p99_us = lat[Math.min(lat.length - 1, Math.floor(lat.length * 0.99))];
  }
  if (o.json) console.log(JSON.stringify(out));
  else {
    console.log(`ort ${out.ort_version}: ${o.model} loaded in ${loadMs.toFixed(1)} ms`);
    for (const x of out.outputs) console.log(`output ${x.name} ${x.type}[${x.dims.join(',')}]`);
    if (o.bench > 0) console.log(`${out.iterations} requests: ${out.req_per_s.toFixed(1)} req/s, p50 ${out.p50_us.toFixed(1)} us, p99 ${out.p99_us.toFixed(1)} us`);
  }
}

main().catch((e) => { console.error(`ort_run.js: ${e.message || e}`); process.exit(1); });
