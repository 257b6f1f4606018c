#!/usr/bin/env node
// SPDX-License-Identifier: MIT
// The greedy decode loop of a decoder step (tests/gen/tiny_gpt.py's export:
// input_ids, position_ids, past_key_values.N.key/.value in; logits,
// present.N.key/.value out) on onnxruntime-node (CPU), the caller passing
// the caches from one step to the next: the reference of
// bench/bench_generate.py.
//
//   node ort_generate.js MODEL.onnx --prompt-ids 1,2,3 --max-new-tokens N
//        [--threads N]
//
// Prints one JSON object: tokens, prompt_ms (the prompt's steps), decode_ms
// (the steps after it), tokens_per_s (decode steps over their wall time).
'use strict';
const path = require('path');
const os = require('os');

function loadOrt() {
  const dir = process.env.IPU_NPM_DIR || path.join(os.homedir(), '.cache', 'ipu-stack', 'npm');
  const cands = [path.join(dir, 'node_modules', 'onnxruntime-node'), 'onnxruntime-node'];
  for (const c of cands) {
    try { return require(c); } catch (e) { if (c === cands[cands.length - 1]) throw e; }
  }
}

async function main() {
  const argv = process.argv.slice(2);
  const o = { model: null, prompt: [], n: 16, threads: 0 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--prompt-ids') o.prompt = argv[++i].split(',').map(Number);
    else if (a === '--max-new-tokens') o.n = Number(argv[++i]);
    else if (a === '--threads') o.threads = Number(argv[++i]);
    else if (!o.model) o.model = a;
    else throw new Error(`unknown argument ${a}`);
  }
  if (!o.model || !o.prompt.length) throw new Error('usage: ort_generate.js MODEL.onnx --prompt-ids A,B --max-new-tokens N');
  const ort = loadOrt();
  const sopt = { graphOptimizationLevel: 'all' };
  if (o.threads > 0) { sopt.intraOpNumThreads = o.threads; sopt.interOpNumThreads = 1; }
  const sess = await ort.InferenceSession.create(o.model, sopt);
  // the caches' shape from the model's inputs: [1, heads, positions, head dim]
  const meta = sess.inputMetadata || [];
  const past = sess.inputNames.filter((n) => n.startsWith('past_key_values.'));
  let dims = null;
  for (const m of (Array.isArray(meta) ? meta : Object.values(meta)))
    if (m && m.name === past[0] && m.shape) dims = m.shape.map(Number);
  if (!dims) throw new Error('cannot read the cache shape of ' + past[0]);
  const size = dims.reduce((a, b) => a * b, 1);
  let cache = {};
  for (const n of past) cache[n] = new ort.Tensor('float32', new Float32Array(size), dims);
  const positions = dims[dims.length - 2];
  const tokens = [];
  let t = o.prompt[0], t0 = process.hrtime.bigint(), t1 = 0n, promptNs = 0n;
  for (let pos = 0; pos < positions && tokens.length < o.n; pos++) {
    const feeds = Object.assign({
      input_ids: new ort.Tensor('int64', BigInt64Array.from([BigInt(t)]), [1, 1]),
      position_ids: new ort.Tensor('int64', BigInt64Array.from([BigInt(pos)]), [1, 1]),
    }, cache);
    const out = await sess.run(feeds);
    const next = {};
    for (const n of past) next[n] = out[n.replace('past_key_values.', 'present.')];
    cache = next;
    if (pos + 1 < o.prompt.length) {
      t = o.prompt[pos + 1];
      continue;
    }
    const l = out.logits.data;
    let best = 0;
    for (let v = 1; v < l.length; v++) if (l[v] > l[best]) best = v;
    t = best;
    tokens.push(t);
    if (tokens.length === 1) {
      t1 = process.hrtime.bigint();
      promptNs = t1 - t0;
    }
  }
  const decodeNs = process.hrtime.bigint() - t1;
  const steps = tokens.length - 1;
  console.log(JSON.stringify({
    tokens, prompt_ms: Number(promptNs) / 1e6, decode_ms: Number(decodeNs) / 1e6,
    tokens_per_s: steps > 0 ? steps / (Number(decodeNs) / 1e9) : null,
  }));
}

main().catch((e) => { console.error('ort_generate.js: ' + e.message); process.exit(1); });
