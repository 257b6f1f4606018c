#!/bin/sh
# SPDX-License-Identifier: MIT
# GPT-2 small's shape (12 layers, d 768, 12 heads, vocab 50257; seeded
# random weights, tests/gen/tiny_gpt.py) with its key/value cache on the
# device, at 128 and 1024 positions, in fp16 (1024 positions do not fit one
# ipu2 in fp32): 64 greedy tokens after an 8-token prompt must be torch's
# (fp32, in-process), and a decode step must stream the same 24 bytes at
# both lengths (the tokens-only program: token, position, next_token).
# Then at 128 positions with a prefill program of 32 tokens (its own
# executable, gpt2s-prefill.ipuef): one set of weights for both programs,
# torch's 64 tokens after prompts of 8 tokens (one run) and of 40 (two).
# A few minutes on 2 cores.  Usage: tests/gen/check-gpt2.sh BUILD_DIR
set -eu
build=${1:-build}
work=$build/gen-gpt2
py=/usr/bin/python3
rm -rf "$work"
pass=0
fail=0
for n in 128 1024; do
	d=$work/p$n
	mkdir -p "$d"
	$py tests/gen/tiny_gpt.py export-gpt2s "$d/gpt2s.onnx" $n
	"$build/bin/ipu-compile" --input-model "$d/gpt2s.onnx" --ipu-version ipu2 \
		--precision fp16 -o "$d/gpt2s.ipuef" >/dev/null
	rm -f "$d/gpt2s.onnx"
	"$build/bin/ipu-run" "$d/gpt2s.ipuef" --generate --prompt-ids 1,2,3,4,5,6,7,8 \
		--max-new-tokens 64 --json >"$d/gen.json"
	$py tests/gen/tiny_gpt.py greedy-gpt2s "$d" $n 64 1 2 3 4 5 6 7 8 >"$d/torch_tokens.txt"
	if $py - "$d/gen.json" "$d/torch_tokens.txt" $n <<'PY'
import json, sys
got = json.load(open(sys.argv[1]))
want = [int(t) for t in open(sys.argv[2]).read().split(",")]
same = sum(a == b for a, b in zip(got["tokens"], want))
ok = got["tokens"] == want and got["device_argmax"] and got["stream_bytes_per_step"] == 24
print("%s - %s positions: %d of torch's %d greedy tokens, %d stream bytes per step, %.1f tokens/s"
      % ("ok" if ok else "not ok", sys.argv[3], same, len(want), got["stream_bytes_per_step"],
         got["tokens_per_s"] or 0))
sys.exit(0 if ok else 1)
PY
	then pass=$((pass + 1)); else fail=$((fail + 1)); fi
	[ "$n" = 128 ] || continue
	# the f16 logits of Main, turned into f32 on the host: sampling among
	# the single most likely token is greedy
	"$build/bin/ipu-run" "$d/gpt2s.ipuef" --generate --prompt-ids 1,2,3,4,5,6,7,8 \
		--max-new-tokens 64 --temperature 0.7 --top-k 1 --json >"$d/gen1.json"
	if $py - "$d/gen1.json" "$d/torch_tokens.txt" <<'PY'
import json, sys
got = json.load(open(sys.argv[1]))
want = [int(t) for t in open(sys.argv[2]).read().split(",")]
ok = got["tokens"] == want and got["sampled"] and got["stream_bytes_per_step"] == 24 + 50257 * 2
print("%s - 128 positions, --top-k 1 from the f16 logits: %d of torch's %d tokens, %d stream bytes per step"
      % ("ok" if ok else "not ok", sum(a == b for a, b in zip(got["tokens"], want)), len(want),
         got["stream_bytes_per_step"]))
sys.exit(0 if ok else 1)
PY
	then pass=$((pass + 1)); else fail=$((fail + 1)); fi
done

d=$work/p128
$py tests/gen/tiny_gpt.py export-gpt2s "$d/gpt2s.onnx" 128
$py tests/gen/tiny_gpt.py export-gpt2s "$d/gpt2s-t32.onnx" 128 --tokens 32
"$build/bin/ipu-compile" --input-model "$d/gpt2s.onnx" --prefill-model "$d/gpt2s-t32.onnx" \
	--ipu-version ipu2 --precision fp16 -v -o "$d/gpt2s-prefill.ipuef" 2>"$d/prefill-compile.log" >/dev/null
rm -f "$d/gpt2s.onnx" "$d/gpt2s-t32.onnx"
grep "prefill program:\|wrote" "$d/prefill-compile.log"
if grep -q "prefill program: .* 0 more frozen" "$d/prefill-compile.log"; then
	echo "ok - prefill program: the decode step's weights, kept once"
	pass=$((pass + 1))
else
	echo "not ok - prefill program: weights frozen a second time"
	fail=$((fail + 1))
fi
$py tests/gen/tiny_gpt.py greedy-gpt2s "$d" 128 64 $(seq 101 140) >"$d/torch_tokens40.txt"
for p in 1,2,3,4,5,6,7,8 $(seq -s, 101 140); do
	n=$(echo $p | tr , ' ' | wc -w)
	"$build/bin/ipu-run" "$d/gpt2s-prefill.ipuef" --generate --prompt-ids $p \
		--max-new-tokens 64 --json >"$d/gen-prefill$n.json"
	want=$d/torch_tokens.txt
	[ "$n" = 8 ] || want=$d/torch_tokens40.txt
	if $py - "$d/gen-prefill$n.json" "$want" $n <<'PY'
import json, sys
got = json.load(open(sys.argv[1]))
want = [int(t) for t in open(sys.argv[2]).read().split(",")]
n = int(sys.argv[3])
runs = (n + 31) // 32
ok = (got["tokens"] == want and got["prefill_runs"] == runs and got["prefill_tokens"] == n
      and got["stream_bytes_per_step"] == 24)
print("%s - 128 positions, prefill of %d tokens in %d runs (%.1f ms, the first token included): %d of torch's %d greedy tokens, %.1f tokens/s after"
      % ("ok" if ok else "not ok", n, got["prefill_runs"], got["prompt_ms"],
         sum(a == b for a, b in zip(got["tokens"], want)), len(want), got["tokens_per_s"] or 0))
sys.exit(0 if ok else 1)
PY
	then pass=$((pass + 1)); else fail=$((fail + 1)); fi
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
