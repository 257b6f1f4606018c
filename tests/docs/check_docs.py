#!/usr/bin/python3
"""The documentation against the tools: every statement in Documentation/
and README.md about the tools' command-line options, exit statuses and the
sizes ipu-compile reports, checked against the tools' own --help and what
they do.  Nothing is listed here by hand: the tools are the programs in
BIN whose --help starts with "usage:", and what they accept and return is
read from that --help each run, so a change of a tool or of a doc that
makes the two disagree fails.

1. options: wherever a doc shows a tool being run (a line of a code block,
   or an inline `code` span, with the tool's name followed by arguments),
   every option after the name must be one the tool's --help lists
   (ipu-compile: in either spelling, --input-shape or --input_shape);
2. every option a --help lists is documented: it appears in a doc that
   names the tool;
3. exit statuses: every "exits N", "exit status N", "Exit status: 0 ...,
   1 ..." in a sentence naming one tool, and every row of an "Exit codes"
   table in a doc about one tool, is a status that tool's --help lists;
4. behaviour: each tool exits 0 for --help and --version and 2 (the status
   its --help gives a bad command line) for an unknown option; the tools
   that read a file exit 1 (the status of a failure) for a missing one;
   ipu-compile answers every PopRT flag the docs list as "not supported"
   so, with status 2, never "unknown";
5. sizes: the line ipu-compile prints, as the docs show it, gives the
   .ipuef file's size and the executable blob's, and they are the file's
   size on disk and the Executable blob's size ipuef-dump reads.
6. defaults: a default the docs give an option is the one its --help
   gives; ipu-compile takes each of its options in PopRT's spelling.

usage: check_docs.py BIN_DIR   (prints "N passed, N failed" last)"""
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.realpath(os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = os.path.realpath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "bin"))
passed = failed = 0


def result(ok, what, problems=()):
    global passed, failed
    if ok:
        passed += 1
        print("ok - " + what)
    else:
        failed += 1
        print("not ok - " + what)
        for p in problems[:40]:
            print("    " + p)
        if len(problems) > 40:
            print("    ... %d more" % (len(problems) - 40))


def run(args, timeout=120, **kw):
    return subprocess.run(args, capture_output=True, text=True, timeout=timeout, **kw)


# ---------------------------------------------------------------- the tools

def tools():
    """name -> --help text, for every tool in BIN (ipu-*, ipuef-*: the
    examples beside them are not tools) with a usage line."""
    out = {}
    for path in sorted(glob.glob(os.path.join(BIN, "ipu*"))):
        if not os.access(path, os.X_OK) or os.path.isdir(path):
            continue
        try:
            p = run([path, "--help"], timeout=30)
        except subprocess.TimeoutExpired:
            continue
        if p.returncode == 0 and p.stdout.startswith("usage:"):
            out[os.path.basename(path)] = p.stdout
    return out


OPT_RE = re.compile(r"(?<![\w/.=-])(--[a-zA-Z][\w-]*|-[a-zA-Z])(?![\w-])")


def help_options(text):
    """Every option a --help shows (its usage lines and option list)."""
    return set(OPT_RE.findall(text))


def help_exit_codes(text):
    """The statuses of the --help's "Exit status:" paragraph."""
    m = re.search(r"Exit status:(.*?)(?:\n\s*\n|\Z)", text, re.S)
    if not m:
        return None
    return {int(n) for n in re.findall(r"(?<![\w.-])(\d+) (?=[a-z(])", m.group(1))}


def normal(tool, opt):
    """ipu-compile takes PopRT's spelling of every option too."""
    return opt.replace("_", "-") if tool == "ipu-compile" else opt


# ----------------------------------------------------------------- the docs

def docs():
    files = sorted(glob.glob(os.path.join(ROOT, "Documentation", "**", "*.md"), recursive=True))
    return [os.path.join(ROOT, "README.md")] + files


FUTURE = re.compile(r"not (?:built|implemented|done|supported) yet|^#+ .*\b(?:planned|future work|roadmap)\b", re.I)


def present_tense(text):
    """The text without its sections about what is not built yet (their
    heading says so): plans are no statements about the tools.  Lines are
    blanked, not removed, so line numbers stay."""
    out, skip, level = [], False, 0
    for line in text.splitlines():
        h = re.match(r"^(#+) ", line)
        if h:
            if skip and len(h.group(1)) <= level:
                skip = False
            if not skip and FUTURE.search(line):
                skip, level = True, len(h.group(1))
        out.append("" if skip else line)
    return "\n".join(out) + "\n"


def rel(path):
    return os.path.relpath(path, ROOT)


NEGATED = re.compile(r"\b(?:no|not|nor|without|never)\b[^.`]{0,40}$", re.I)


def contexts(text):
    """(line number, text) of every code-block line and inline code span,
    but for spans the prose negates ("there is no `ipu-run --generate`")."""
    out = []
    fence = False
    para, start = [], 0

    def flush():
        joined = "\n".join(para)
        for m in re.finditer(r"`([^`\n]+)`", joined):
            before = re.sub(r"`[^`]*`", "", joined[:m.start()]).replace("\n", " ")
            if not NEGATED.search(before):
                out.append((start + joined.count("\n", 0, m.start()), m.group(1)))

    for i, line in enumerate(text.splitlines() + [""], 1):
        if line.lstrip().startswith("```"):
            flush()
            para = []
            fence = not fence
            continue
        if fence:
            out.append((i, line))
            continue
        if line.strip() == "":
            flush()
            para = []
            continue
        if not para:
            start = i
        para.append(line)
    return out


def invocations(ctx, names):
    """(tool, [options]) for each tool run in a code line or span: the tool's
    name as a command word, then its arguments up to a shell separator."""
    out = []
    for part in re.split(r"\|\||&&|[|;]", ctx):
        words = part.split()
        for k, w in enumerate(words):
            name = os.path.basename(w)
            if name in names and (k == 0 or not words[k - 1].endswith(("=", "'"))):
                args = []
                for a in words[k + 1:]:
                    if a.startswith("#"):
                        break
                    args.append(a)
                opts = [o for a in args for o in [a.split("=", 1)[0]] if OPT_RE.fullmatch(o)]
                out.append((name, opts))
                break
    return out


def sentences(text):
    """(line number, sentence, paragraph) of the prose, sentences joined
    across lines; a table row is a sentence of its own."""
    out = []
    para, start = [], 0
    fence = False
    for i, line in enumerate(text.splitlines() + [""], 1):
        if line.lstrip().startswith("```"):
            fence = not fence
            continue
        if fence:
            continue
        if line.strip() == "" or line.startswith("|") or line.startswith("#"):
            if para:
                joined = " ".join(para)
                for s in re.split(r"(?<=[.;])\s+(?=[A-Z`(])", joined):
                    out.append((start, s, joined))
            para = []
            if line.startswith("|"):
                out.append((i, line, line))
            continue
        if not para:
            start = i
        para.append(line.strip())
    return out


EXIT_RE = re.compile(r"(?:\bexits?(?: with)?(?: status| code)?|\bexit (?:status|code)|Exit status:)\s*(\d+)((?:\s*\([^)]*\))?(?:\s*(?:,|or|and)\s*(?:\d+)(?:\s*\([^)]*\))?)*)", re.I)


def exit_statements(sentence):
    """The statuses a sentence says a tool exits with."""
    codes = []
    for m in EXIT_RE.finditer(sentence):
        codes.append(int(m.group(1)))
        codes += [int(n) for n in re.findall(r"(?:,|or|and)\s*(\d+)", m.group(2))]
    # "Exit status: 0 done, 1 failed, 2 bad command line"
    for m in re.finditer(r"Exit status:\s*(.*)", sentence):
        codes += [int(n) for n in re.findall(r"(?<![\w.-])(\d+) (?=[a-z(])", m.group(1))]
    return codes


def named_tools(s, names):
    return [t for t in names if re.search(r"(?<![\w/-])" + re.escape(t) + r"(?![\w-])", s)]


# ------------------------------------------------------------------ checks

def check_options(helps, texts, report=None):
    report = report or result
    known = {t: {normal(t, o) for o in help_options(h)} for t, h in helps.items()}
    bad, seen = [], 0
    for path, text in texts.items():
        for line, ctx in contexts(text):
            for tool, opts in invocations(ctx, helps):
                for o in opts:
                    seen += 1
                    if normal(tool, o) not in known[tool]:
                        bad.append("%s:%d: `%s ... %s`: %s --help has no %s" % (rel(path), line, tool, o, tool, o))
    report(not bad, "every option the docs run a tool with is in its --help (%d uses)" % seen, bad)


def poprt_flags(texts):
    """The PopRT flags the docs list as ones ipu-compile does not have."""
    flags = set()
    for text in texts.values():
        for m in re.finditer(r"PopRT(?: [\d.]+)?'s flags that `ipu-compile` does not have(.*?)(?:\n\s*\n)", text, re.S):
            flags |= set(re.findall(r"`(--[a-z][a-z0-9_]*)`", m.group(1)))
    return flags


def check_prose_options(helps, texts, report=None):
    report = report or result
    """`--opt` named in a paragraph about one tool is that tool's (or one
    of the PopRT flags the docs list as not supported)."""
    known = {t: {normal(t, o) for o in help_options(h)} for t, h in helps.items()}
    unsupported = {normal("ipu-compile", f) for f in poprt_flags(texts)}
    bad, n = [], 0
    for path, text in texts.items():
        for line, s, para in sentences(text):
            who = named_tools(para, helps)
            if len(who) != 1:
                continue
            t = who[0]
            for m in re.finditer(r"`(--[a-zA-Z][\w-]*)[^`]*`", s):
                o = normal(t, m.group(1))
                n += 1
                if o not in known[t] and not (t == "ipu-compile" and o in unsupported):
                    bad.append("%s:%d: names %s in a paragraph about %s; %s --help has no such option" %
                               (rel(path), line, m.group(1), t, t))
    report(not bad and n > 0, "every option the prose names beside one tool is in its --help (%d mentions)" % n, bad)


def check_documented(helps, texts, report=None):
    report = report or result
    # a rule for every tool covers --help and --version (limits.md)
    common = set()
    for t in texts.values():
        for m in re.finditer(r"Every tool[^.]*\.", t.replace("\n", " ")):
            common |= set(OPT_RE.findall(m.group(0)))
    bad, n = [], 0
    for tool, h in sorted(helps.items()):
        about = [t for t in texts.values() if re.search(r"(?<![\w-])" + re.escape(tool) + r"(?![\w-])", t)]
        words = set()
        for t in about:
            words |= {normal(tool, o) for o in OPT_RE.findall(t)}
        for o in sorted(help_options(h)):
            if not o.startswith("--"):
                continue
            n += 1
            if normal(tool, o) not in words and o not in common:
                bad.append("%s --help lists %s, which no doc naming %s mentions" % (tool, o, tool))
    report(not bad, "every option of every --help is documented (%d options of %d tools)" % (n, len(helps)), bad)


def check_exit_statements(helps, texts, report=None):
    report = report or result
    codes = {t: help_exit_codes(h) for t, h in helps.items()}
    bad, n = [], 0
    missing = [t for t, c in codes.items() if not c]
    for path, text in texts.items():
        for line, s, para in sentences(text):
            said = exit_statements(s)
            if not said:
                continue
            # the tool the sentence names, else the one its paragraph does;
            # "every tool": all of them
            if re.search(r"\bevery tool\b", s, re.I):
                who = sorted(helps)
            else:
                who = named_tools(s, helps) or named_tools(para, helps)
                if len(who) != 1:
                    continue	# about no tool or several: nothing to hold it to
            for t in who:
                for c in said:
                    n += 1
                    if c not in (codes[t] or ()):
                        bad.append("%s:%d: says %s exits %d; its --help: Exit status %s" %
                                   (rel(path), line, t, c, sorted(codes[t] or ())))
        # "## Exit codes" tables of a doc about one tool
        for m in re.finditer(r"^#+ *Exit (?:codes|status)\s*\n(.*?)(?=^#|\Z)", text, re.S | re.M):
            counts = {t: len(re.findall(r"(?<![\w/-])" + re.escape(t) + r"(?![\w-])", text)) for t in helps}
            tool = max(counts, key=counts.get)
            for row in re.findall(r"^\| *(\d+) *\|", m.group(1), re.M):
                n += 1
                if int(row) not in (codes[tool] or ()):
                    bad.append("%s: the exit codes table lists %s for %s; its --help: Exit status %s" %
                               (rel(path), row, tool, sorted(codes[tool] or ())))
    report(not missing, "every tool's --help states its exit statuses", ["%s: no 'Exit status:' in --help" % t for t in missing])
    report(not bad and n > 0, "every exit status the docs give a tool is one its --help lists (%d statements)" % n, bad)
    return codes


def check_behaviour(helps, codes, work):
    bad = []
    for tool in sorted(helps):
        path = os.path.join(BIN, tool)
        for args, want in ((["--help"], 0), (["--version"], 0), (["--no-such-option-xyz"], 2)):
            p = run([path] + args, timeout=30)
            if p.returncode != want:
                bad.append("%s %s exits %d, not %d" % (tool, " ".join(args), p.returncode, want))
        if codes.get(tool) and 2 not in codes[tool]:
            bad.append("%s: --help gives no status 2 for a bad command line" % tool)
    missing = os.path.join(work, "missing")
    # what each names: a missing model, file, device or repository
    for tool, args, named in (("ipu-compile", [missing + ".onnx"], "missing"),
                              ("ipu-run", [missing + ".ipuef"], "missing"),
                              ("ipuef-dump", [missing + ".ipuef"], "missing"),
                              ("ipu-info", ["/dev/accel/accel999"], "accel999"),
                              ("ipu-reset", ["/dev/accel/accel999"], "accel999"),
                              ("ipu-serve", ["--model-repository", missing], "missing")):
        if tool in helps:
            p = run([os.path.join(BIN, tool)] + args, timeout=60)
            if p.returncode != 1 or named not in p.stderr + p.stdout:
                bad.append("%s %s exits %d (not 1), says: %s" % (tool, " ".join(args), p.returncode,
                                                                 (p.stderr + p.stdout).strip()[:200]))
    result(not bad, "--help, --version exit 0, an unknown option 2, a missing file, device or repository 1 (%d tools)" % len(helps), bad)


def check_poprt(texts, work):
    """The PopRT flags the docs list as ones ipu-compile lacks."""
    flags = poprt_flags(texts)
    bad = []
    for f in sorted(flags):
        for spelling in (f, f.replace("_", "-")):
            p = run([os.path.join(BIN, "ipu-compile"), spelling, "x"], timeout=30)
            if p.returncode != 2 or "not supported" not in p.stderr or "unknown" in p.stderr:
                bad.append("%s: exit %d, %s" % (spelling, p.returncode, p.stderr.strip()[:160]))
    result(flags and not bad, "the %d PopRT flags the docs list are answered 'not supported', exit 2" % len(flags), bad)


def help_defaults(text):
    """option -> the default its --help states ("(1..4096, default 16)")."""
    out, cur = {}, None
    for line in text.splitlines():
        m = re.match(r"\s+(?:-\w, )?(--[\w-]+)", line)
        if m:
            cur = m.group(1)
        elif not line.startswith(" "):
            cur = None
        if cur:
            for v in re.findall(r"default:? ([\w.:/-]+)", line):
                out.setdefault(cur, v.rstrip(".:"))
    return out


def check_defaults(helps, texts):
    """A default the docs give an option ("`--warmup N` ... (default 5)",
    an options table's "default 0") is the one its --help gives.  The tool
    is the one named last before it in the section, else (a table row) the
    one the doc is about."""
    defaults = {t: help_defaults(h) for t, h in helps.items()}
    tool_re = re.compile(r"(?<![\w/-])(" + "|".join(map(re.escape, sorted(helps, key=len, reverse=True))) + r")(?![\w-])")
    bad, n = [], 0
    for path, text in texts.items():
        counts = {t: len(re.findall(r"(?<![\w/-])" + re.escape(t) + r"(?![\w-])", text)) for t in helps}
        about = max(counts, key=counts.get) if any(counts.values()) else None
        last = None
        for i, line in enumerate(text.splitlines(), 1):
            if line.startswith("#"):
                last = None
            for m in re.finditer(r"(?:\(|[,;|] )default:? `?([\w.:/-]+)", line):
                opts = re.findall(r"`(--[a-zA-Z][\w-]*)[^`]*`", line[:m.start()])
                tool = (tool_re.findall(line[:m.start()]) or [last])[-1] or (about if line.startswith("|") else None)
                if not opts or not tool:
                    continue
                want = defaults[tool].get(normal(tool, opts[-1])) or defaults[tool].get(opts[-1])
                if want is None:
                    continue
                n += 1
                if m.group(1).rstrip(".:") != want:
                    bad.append("%s:%d: %s %s default %s; its --help: default %s" %
                               (rel(path), i, tool, opts[-1], m.group(1), want))
            found = tool_re.findall(line)
            if found:
                last = found[-1]
    result(not bad and n > 0, "every default the docs give an option is its --help's (%d)" % n, bad)


def check_poprt_spellings(helps, texts):
    """The docs say ipu-compile takes every option in PopRT's spelling too:
    none of --help's options is "unknown" with underscores."""
    said = any(re.search(r"also accepted with underscores", t) for t in texts.values())
    bad, n = [], 0
    for o in sorted(help_options(helps.get("ipu-compile", ""))):
        if not o.startswith("--") or "-" not in o[2:]:
            continue
        n += 1
        p = run([os.path.join(BIN, "ipu-compile"), o.replace("-", "_").replace("__", "--", 1)], timeout=30)
        if "unknown option" in p.stderr:
            bad.append("%s: %s" % (o.replace("-", "_").replace("__", "--", 1), p.stderr.strip()[:120]))
    result(said and n and not bad, "ipu-compile takes each of its %d dashed options in PopRT's underscore spelling, as the docs say" % n,
           bad or ([] if said else ["no doc says options are accepted with underscores"]))


def check_sizes(texts, work):
    """ipu-compile's summary line: the file's size and the blob's."""
    shown = []
    for path, text in texts.items():
        for line, ctx in contexts(text):
            if ctx.startswith("ipu-compile: wrote ") and "bytes" in ctx:
                shown.append((path, line, ctx))
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    w = numpy_helper.from_array(np.arange(12, dtype=np.float32).reshape(4, 3), "w")
    g = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])], [w])
    model = os.path.join(work, "mm.onnx")
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), model)
    exe = os.path.join(work, "mm.ipuef")
    p = run([os.path.join(BIN, "ipu-compile"), model, "-o", exe, "--target", "tiles=4,tile-mem=64KiB"])
    line = [l for l in p.stderr.splitlines() if l.startswith("ipu-compile: wrote ")]
    bad = []
    if p.returncode != 0 or not line:
        result(False, "ipu-compile's sizes", ["compile failed: " + p.stderr[-300:]])
        return
    m = re.match(r"ipu-compile: wrote (\S+) \((\d+) bytes; executable blob (\d+) bytes\)", line[0])
    d = json.loads(run([os.path.join(BIN, "ipuef-dump"), "--json", exe]).stdout)
    blob = [b["size"] for b in d["blobs"] if b["type"] == "Executable"]
    if not m:
        bad.append("ipu-compile printed: " + line[0])
    else:
        if int(m.group(2)) != os.path.getsize(exe):
            bad.append("printed file size %s, the file has %d bytes" % (m.group(2), os.path.getsize(exe)))
        if [int(m.group(3))] != blob:
            bad.append("printed executable blob %s bytes, ipuef-dump reads %s" % (m.group(3), blob))
    # the docs show the line as the tool prints it
    pat = re.compile(r"ipu-compile: wrote \S+ \(\S+ bytes; executable blob \S+ bytes\)")
    for path, ln, ctx in shown:
        if not pat.match(ctx):
            bad.append("%s:%d: shows `%s`, the tool prints `%s...`" % (rel(path), ln, ctx[:90], line[0][:70]))
    result(not bad and shown, "ipu-compile prints the .ipuef's size (%d bytes) and the executable blob's (%s), as %d doc lines show" %
           (os.path.getsize(exe), blob, len(shown)), bad or ([] if shown else ["no doc shows ipu-compile's summary line"]))


def check_catches_lies(helps):
    """The checks above fail on docs that lie: a made-up option, an exit
    status the tool never returns (in prose and in an Exit codes table),
    an option of --help nobody documented."""
    lies = {"lie.md": "# ipu-compile\n\nCompile with `ipu-compile m.onnx --frobnicate`.\n\n"
                      "Then `ipu-run` takes `--no-such-flag` too.\n\n"
                      "`ipu-compile` exits 3 when the lowering fails.\n\n"
                      "## Exit codes\n\n| code | meaning |\n|---|---|\n| 4 | ipu-compile: never |\n"}
    caught = {}
    for name, fn in (("option", check_options), ("prose option", check_prose_options),
                     ("exit status", check_exit_statements), ("undocumented option", check_documented)):
        got = []
        fn(helps, lies, report=lambda ok, what, bad=(), got=got: got.append((ok, list(bad))))
        caught[name] = [b for ok, bad in got if not ok for b in bad]
    want = {"option": "--frobnicate", "prose option": "--no-such-flag", "exit status": "exits 3",
            "undocumented option": "--input-shape"}
    missed = [k for k, w in want.items() if not any(w in b for b in caught[k])]
    missed += [k for k in ("exit status",) if not any("table lists 4" in b for b in caught[k])]
    result(not missed, "the checks catch a doc that lies (%s)" % ", ".join(sorted(want)),
           ["not caught: %s (%s)" % (k, caught.get(k)) for k in missed])


def main():
    helps = tools()
    texts = {p: present_tense(open(p, encoding="utf-8").read()) for p in docs()}
    result(len(helps) >= 5, "tools with --help in %s: %s" % (BIN, ", ".join(sorted(helps))))
    work = tempfile.mkdtemp(prefix="check-docs-")
    try:
        check_options(helps, texts)
        check_prose_options(helps, texts)
        check_documented(helps, texts)
        codes = check_exit_statements(helps, texts)
        check_behaviour(helps, codes, work)
        check_poprt(texts, work)
        check_poprt_spellings(helps, texts)
        check_defaults(helps, texts)
        check_sizes(texts, work)
        check_catches_lies(helps)
    finally:
        subprocess.run(["rm", "-rf", work])
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
