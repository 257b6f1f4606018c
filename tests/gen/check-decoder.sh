#!/bin/sh
# SPDX-License-Identifier: MIT
# A torch decoder with its key/value cache kept on the device: export,
# compile (the cache pairs found by their Hugging Face names), step it
# through the runtime against torch's greedy loop, with caches of 32 and 64
# positions.  Usage: tests/gen/check-decoder.sh BUILD_DIR
set -eu
build=${1:-build}
work=$build/gen-decoder
rm -rf "$work"
mkdir -p "$work/p32" "$work/p64"
py=/usr/bin/python3
for n in 32 64; do
	$py tests/gen/tiny_gpt.py export "$work/p$n/tiny_gpt.onnx" $n
	"$build/bin/ipu-compile" --input-model "$work/p$n/tiny_gpt.onnx" \
		--target tiles=16,tile-mem=256KiB -o "$work/p$n/tiny_gpt.ipuef" >/dev/null
	# 3 prompt tokens, 17 greedy ones: 19 steps
	$py tests/gen/tiny_gpt.py greedy "$work/p$n" $n 17 1 2 3 >"$work/p$n/torch_tokens.txt"
	echo "# cache of $n positions"
	"$build/tests/gen/test_decoder" "$work/p$n/tiny_gpt.ipuef" "$work/p$n/tokens.npy" \
		"$work/p$n/torch_logits.npy"
	# ipu-run --generate: torch's 17 greedy tokens
	"$build/bin/ipu-run" "$work/p$n/tiny_gpt.ipuef" --generate --prompt-ids 1,2,3 \
		--max-new-tokens 17 --json >"$work/p$n/gen.json"
	$py - "$work/p$n/gen.json" "$work/p$n/torch_tokens.txt" <<'PY'
import json, sys
got = json.load(open(sys.argv[1]))
want = [int(t) for t in open(sys.argv[2]).read().split(",")]
assert got["tokens"] == want, (got["tokens"], want)
assert got["new_tokens"] == 17 and got["stopped"] == "max new tokens", got
# the tokens-only program: ids, position and next_token, no logits
assert got["device_argmax"] and got["stream_bytes_per_step"] == 24, got
print("ok - ipu-run --generate: torch's %d greedy tokens, %d stream bytes per step"
      % (len(want), got["stream_bytes_per_step"]))
PY
	# sampling that can only pick the most likely token is greedy
	"$build/bin/ipu-run" "$work/p$n/tiny_gpt.ipuef" --generate --prompt-ids 1,2,3 \
		--max-new-tokens 17 --temperature 0.7 --top-k 1 --seed 3 --json >"$work/p$n/gen1.json"
	$py - "$work/p$n/gen1.json" "$work/p$n/torch_tokens.txt" <<'PY'
import json, sys
got = json.load(open(sys.argv[1]))
want = [int(t) for t in open(sys.argv[2]).read().split(",")]
assert got["tokens"] == want and got["sampled"] and not got["device_argmax"], got
print("ok - ipu-run --generate --temperature --top-k 1: torch's greedy tokens")
PY
	# Python: Runner.generate() and the state methods; its sampler against ipu-run's
	"$build/bin/ipu-run" "$work/p$n/tiny_gpt.ipuef" --generate --prompt-ids 1,2,3 \
		--max-new-tokens 16 --temperature 0.8 --top-k 20 --top-p 0.9 --seed 7 --json |
		$py -c 'import json,sys; print(",".join(map(str, json.load(sys.stdin)["tokens"])))' \
		>"$work/p$n/c_sampled.txt"
	PYTHONPATH=$build/python $py tests/gen/test_generate.py "$work/p$n/tiny_gpt.ipuef" \
		"$work/p$n/torch_tokens.txt" "$work/p$n/tokens.npy" "$work/p$n/torch_logits.npy" \
		"$work/p$n/c_sampled.txt"
done

# compiled in fp16: f16 logits, turned into f32 on the host for the
# sampler; torch's greedy tokens from next_token and from top-k 1 sampling
"$build/bin/ipu-compile" --input-model "$work/p32/tiny_gpt.onnx" --precision fp16 \
	--target tiles=16,tile-mem=256KiB -o "$work/p32/tiny_gpt16.ipuef" >/dev/null
"$build/bin/ipu-run" "$work/p32/tiny_gpt16.ipuef" --generate --prompt-ids 1,2,3 \
	--max-new-tokens 17 --json >"$work/p32/gen16.json"
"$build/bin/ipu-run" "$work/p32/tiny_gpt16.ipuef" --generate --prompt-ids 1,2,3 \
	--max-new-tokens 17 --temperature 0.7 --top-k 1 --json >"$work/p32/gen16s.json"
"$build/bin/ipu-run" "$work/p32/tiny_gpt16.ipuef" --generate --prompt-ids 1,2,3 \
	--max-new-tokens 17 --temperature 0.7 --top-k 1 --host-sampling --json >"$work/p32/gen16h.json"
$py - "$work/p32" <<'PY'
import json, sys
want = [int(t) for t in open(sys.argv[1] + "/torch_tokens.txt").read().split(",")]
g = json.load(open(sys.argv[1] + "/gen16.json"))
s = json.load(open(sys.argv[1] + "/gen16s.json"))
h = json.load(open(sys.argv[1] + "/gen16h.json"))
assert g["tokens"] == want and g["stream_bytes_per_step"] == 24, g
# on the device: ids, position, the sampler's 3 keys and 2 params, the token
assert s["tokens"] == want and s["sampled"] and s["device_sampling"], s
assert s["stream_bytes_per_step"] == 8 + 8 + 24 + 8 + 8, s
# on the host: ids, position, next_token and 96 f16 logits
assert h["tokens"] == want and not h["device_sampling"] and h["stream_bytes_per_step"] == 24 + 96 * 2, h
print("ok - fp16: torch's greedy tokens from next_token, from top-k 1 sampling on the device (56 bytes per step) and on the host from the f16 logits (216)")
PY

# sampling on the device against the host's sampler, token for token,
# in fp32 and fp16 (test_sample: 4 settings x 6 seeds, top-k 1 as greedy)
echo "# device sampling, fp32"
"$build/tests/gen/test_sample" "$work/p32/tiny_gpt.ipuef"
echo "# device sampling, fp16"
"$build/tests/gen/test_sample" "$work/p32/tiny_gpt16.ipuef"

# the prefill program (ipu-compile --prefill-model: the same module exported
# with 5 tokens a step, one set of weights and caches with the decode step):
# prompts of 1 to 31 tokens take 1 to 6 runs of it (the last padded; a run
# that would pass the cache's 32 positions leaves its tokens to steps), and
# give torch's greedy tokens of the token-by-token loop; sampling (the last
# prompt token by a step, for its logits) the same tokens as without prefill
mkdir -p "$work/pre"
$py tests/gen/tiny_gpt.py export "$work/pre/pre5.onnx" 32 --tokens 5
"$build/bin/ipu-compile" --input-model "$work/p32/tiny_gpt.onnx" --prefill-model "$work/pre/pre5.onnx" \
	--target tiles=16,tile-mem=256KiB -v -o "$work/pre/tiny_pre.ipuef" 2>"$work/pre/compile.log" >/dev/null
grep -q "prefill program: .* bytes of its constants are the decode step's (kept once; .* 0 more frozen" \
	"$work/pre/compile.log" || { grep prefill "$work/pre/compile.log"; echo "the prefill's weights are not the decode step's"; exit 1; }
"$build/bin/ipuef-dump" --json "$work/pre/tiny_pre.ipuef" | $py -c '
import json, sys
m = json.load(sys.stdin)["metadata"]
progs = {p["name"]: p["index"] for p in m["programs"]}
assert progs.get("prefill") == 4, progs
a = {x["name"]: x for x in m["anchors"]}
assert a["prefill/input_ids"]["shape"] == [1, 5] and a["prefill/next_token"]["shape"] == [1, 5], a
assert a["prefill/input_ids"]["programs"] == ["prefill"], a
assert "prefill/logits" not in a and len(m["states"]) == 4, a
print("ok - ipuef-dump: program prefill (4), its anchors [1, 5], the 4 states shared")
'
i=0
for p in 7 1,2,3 3,1,4,1,5 $(seq -s, 1 12) $(seq -s, 2 2 60) $(seq -s, 40 70); do
	d=$work/pre/r$i
	mkdir -p "$d"
	n=$(echo $p | tr , ' ' | wc -w)
	new=$((32 - n < 8 ? 32 - n + 1 : 8))
	$py tests/gen/tiny_gpt.py greedy "$d" 32 $new $(echo $p | tr , ' ') >"$d/torch.txt"
	"$build/bin/ipu-run" "$work/pre/tiny_pre.ipuef" --generate --prompt-ids $p \
		--max-new-tokens $new --json >"$d/gen.json"
	for f in pre/tiny_pre p32/tiny_gpt; do
		"$build/bin/ipu-run" "$work/$f.ipuef" --generate --prompt-ids $p \
			--max-new-tokens $new --temperature 0.9 --top-k 20 --top-p 0.95 --seed 11 --json \
			>"$d/s-${f##*/}.json"
	done
	$py - "$d" $n <<'PY'
import json, sys
d, n = sys.argv[1], int(sys.argv[2])
g = json.load(open(d + "/gen.json"))
want = [int(t) for t in open(d + "/torch.txt").read().split(",")]
runs = (n + 4) // 5 if ((n + 4) // 5) * 5 <= 32 else n // 5
assert g["tokens"] == want and g["stream_bytes_per_step"] in (0, 24), (g, want)
assert g["prefill_runs"] == runs and g["prefill_tokens"] == min(n, 5 * runs), (g, runs)
a, b = json.load(open(d + "/s-tiny_pre.json")), json.load(open(d + "/s-tiny_gpt.json"))
assert a["tokens"] == b["tokens"] and a["prefill_tokens"] == (n - 1 if n > 1 and (n + 3) // 5 * 5 <= 32 else a["prefill_tokens"]), (a, b)
print("ok - prefill of %d tokens in %d runs: torch's %d greedy tokens; seeded sampling as without prefill"
      % (n, runs, len(want)))
PY
	i=$((i + 1))
done
# in fp16 too (the prefill's weights the step's f16 ones): the 12-token prompt
"$build/bin/ipu-compile" --input-model "$work/p32/tiny_gpt.onnx" --prefill-model "$work/pre/pre5.onnx" \
	--precision fp16 --target tiles=16,tile-mem=256KiB -o "$work/pre/tiny_pre16.ipuef" >/dev/null
"$build/bin/ipu-run" "$work/pre/tiny_pre16.ipuef" --generate --prompt-ids $(seq -s, 1 12) \
	--max-new-tokens 8 --json >"$work/pre/gen16.json"
$py - "$work/pre/gen16.json" "$work/pre/r3/torch.txt" <<'PY'
import json, sys
g = json.load(open(sys.argv[1]))
want = [int(t) for t in open(sys.argv[2]).read().split(",")]
assert g["tokens"] == want and g["prefill_runs"] == 3 and g["prefill_tokens"] == 12, (g, want)
print("ok - fp16: prefill of 12 tokens in 3 runs, torch's greedy tokens")
PY
# Python's Runner.generate() on it (ipurt_generate: the prefill program)
PYTHONPATH=$build/python $py - "$work/pre/tiny_pre.ipuef" "$work/pre/r3/torch.txt" <<'PY'
import sys
import ipu.runtime
want = [int(t) for t in open(sys.argv[2]).read().split(",")]
with ipu.runtime.Runner(sys.argv[1]) as r:
    got = list(r.generate(list(range(1, 13)), max_new_tokens=len(want)))
    again = list(r.generate(list(range(1, 13)), max_new_tokens=len(want)))
assert got == want and again == want, (got, again, want)
print("ok - Python Runner.generate() with the prefill program: torch's greedy tokens, twice")
PY

# 4 cache slots, 6 sequences: the step API against torch's loop of each
# prompt alone (the same weights)
mkdir -p "$work/slots"
$py tests/gen/tiny_gpt.py export "$work/slots/s4.onnx" 32 --slots 4
"$build/bin/ipu-compile" --input-model "$work/slots/s4.onnx" \
	--target tiles=16,tile-mem=256KiB -o "$work/slots/s4.ipuef" >/dev/null
set --
i=0
for p in 1,2,3 5 7,8,9,10,11 4,4 2,9 60,61,62; do
	mkdir -p "$work/slots/r$i"
	t=$($py tests/gen/tiny_gpt.py greedy "$work/slots/r$i" 32 $((10 + i)) $(echo $p | tr , ' '))
	set -- "$@" "$p=$t"
	i=$((i + 1))
done
echo "# 4 cache slots"
"$build/tests/gen/test_slots" "$work/slots/s4.ipuef" "$@"
# the step API (ipu-serve's loop) on the one-slot decoder with the prefill
# program: each prompt through it when it starts, the same tokens
echo "# 1 slot, the prefill program"
"$build/tests/gen/test_slots" "$work/pre/tiny_pre.ipuef" "$@"
# device sampling: with the prefill program, and 4 slots sampled at once
echo "# device sampling, the prefill program"
"$build/tests/gen/test_sample" "$work/pre/tiny_pre.ipuef"
echo "# device sampling, 4 cache slots"
"$build/tests/gen/test_sample" "$work/slots/s4.ipuef"
# ipu-run --generate on it: one sequence in a slot, the one-slot model's
# greedy and seeded sampled tokens
"$build/bin/ipu-run" "$work/slots/s4.ipuef" --generate --prompt-ids 1,2,3 \
	--max-new-tokens 17 --json >"$work/slots/gen.json"
"$build/bin/ipu-run" "$work/slots/s4.ipuef" --generate --prompt-ids 1,2,3 \
	--max-new-tokens 16 --temperature 0.8 --top-k 20 --top-p 0.9 --seed 7 --json \
	>"$work/slots/sampled.json"
$py - "$work/slots" "$work/p32" <<'PY'
import json, sys
g = json.load(open(sys.argv[1] + "/gen.json"))
want = [int(t) for t in open(sys.argv[2] + "/torch_tokens.txt").read().split(",")]
assert g["tokens"] == want and g["stream_bytes_per_step"] == 96, g
s = json.load(open(sys.argv[1] + "/sampled.json"))
want = [int(t) for t in open(sys.argv[2] + "/c_sampled.txt").read().split(",")]
assert s["tokens"] == want and s["sampled"], (s, want)
print("ok - ipu-run --generate on 4 slots: torch's greedy tokens (96 bytes per step), the one-slot model's sampled ones")
PY

# the pairs named, or none; what is refused
m=$work/p32/tiny_gpt.onnx
c="$build/bin/ipu-compile --input-model $m --target tiles=16,tile-mem=256KiB"
$c --state none -o "$work/none.ipuef" 2>/dev/null
n=$("$build/bin/ipuef-dump" --json "$work/none.ipuef" | $py -c 'import json,sys; m=json.load(sys.stdin)["metadata"]; print(len(m["anchors"]), len(m["states"]))')
[ "$n" = "11 0" ] || { echo "--state none: anchors and states $n, want 11 0"; exit 1; }
$c --state past_key_values.0.key=present.0.key -o "$work/one.ipuef" 2>/dev/null
n=$("$build/bin/ipuef-dump" --json "$work/one.ipuef" | $py -c 'import json,sys; m=json.load(sys.stdin)["metadata"]; print(len(m["anchors"]), len(m["states"]))')
# input_ids, position_ids, logits, next_token and the sampling program's 3
[ "$n" = "7 4" ] || { echo "--state with one pair (and the rest by name): anchors and states $n, want 7 4"; exit 1; }
if $c --state past_key_values.0.key=logits -o "$work/x.ipuef" 2>"$work/err"; then
	echo "a pair of different shapes was accepted"; exit 1
fi
grep -q "must keep its dtype and shape" "$work/err" || { cat "$work/err"; exit 1; }
if $c --state nope=present.0.key -o "$work/x.ipuef" 2>"$work/err"; then
	echo "a pair naming no input was accepted"; exit 1
fi
grep -q "the model has no input 'nope'" "$work/err" || { cat "$work/err"; exit 1; }
echo "ok - --state pairs, none and refusals"
