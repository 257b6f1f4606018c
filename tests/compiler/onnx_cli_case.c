/* SPDX-License-Identifier: MIT */
/*
 * onnx_cli_case.c - one ONNX test case (model.onnx + test_data_set_0/
 * {input,output}_N.pb) through the command-line tools as a user runs
 * them: ipu-compile for a 16-tile x 1 MiB target, then ipu-run with the
 * case's input_N.pb files, its outputs written as .pb and compared with
 * output_N.pb at ONNX's backend-test tolerances (rtol 1e-3, atol 1e-7;
 * float16 outputs 1e-2 both, as guide.md's conformance runners).  When the
 * compile asks for an input as a compile-time constant, the case's integer
 * inputs are frozen (ipu-compile --freeze NAME=input_N.pb), and as a last
 * resort every input but the first, as the in-process runner does.
 *
 *   onnx_cli_case BINDIR CASEDIR
 *
 * Prints one line: "pass|wrong|unsupported|no-data NAME [frozen] message"
 * and exits 0 (the outcome is in the line; 2: bad command line).  The
 * model is read only for its input and output names and types, which a
 * user reads off any model viewer.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ipu/ir.h"
#include "ipu/onnx_io.h"

extern char **environ;

#define MAXT 32
#define MAXARGS (16 + 4 * MAXT)

struct tcase {
	const char *bindir, *dir, *name;
	char tmp[256];
	int nin, nout;
	struct ir_tensor in[MAXT], want[MAXT];
	char *in_names[MAXT], *out_names[MAXT];
	int in_dtype[MAXT];
	char msg[600];
};

/* Runs argv with stdout and stderr into tmp/log; returns the exit status
 * (-1: not run), the log's last non-empty line in last. */
static int run(struct tcase *c, char **argv, char *last, size_t len)
{
	posix_spawn_file_actions_t fa;
	char log[300], line[2048];
	pid_t pid;
	int st = 0, rc;
	FILE *f;

	snprintf(log, sizeof(log), "%s/log", c->tmp);
	last[0] = 0;
	if (posix_spawn_file_actions_init(&fa))
		return -1;
	posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	posix_spawn_file_actions_adddup2(&fa, 1, 2);
	rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc) {
		snprintf(last, len, "cannot run %s: %s", argv[0], strerror(rc));
		return -1;
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	f = fopen(log, "r");
	while (f && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		if (line[0])
			snprintf(last, len, "%s", line);
	}
	if (f)
		fclose(f);
	unlink(log);
	if (WIFSIGNALED(st)) {
		snprintf(last, len, "%s killed by signal %d", argv[0], WTERMSIG(st));
		return -1;
	}
	return WEXITSTATUS(st);
}

static int load(struct tcase *c, struct ir_error *e)
{
	char path[4096];
	struct ir_graph *g;

	for (int k = 0; k < 2; k++)
		for (int i = 0; i < MAXT; i++) {
			snprintf(path, sizeof(path), "%s/test_data_set_0/%s_%d.pb", c->dir,
				 k ? "output" : "input", i);
			if (access(path, R_OK))
				break;
			if (onnx_load_tensor_file(path, k ? &c->want[i] : &c->in[i], NULL, e))
				return -1;
			*(k ? &c->nout : &c->nin) += 1;
		}
	snprintf(path, sizeof(path), "%s/model.onnx", c->dir);
	g = onnx_load_file(path, e);
	if (!g)
		return 1;
	if (g->ninputs != c->nin || g->noutputs != c->nout) {
		ir_graph_free(g);
		ir_err(e, "test data does not match the model's inputs/outputs");
		return -1;
	}
	for (int i = 0; i < c->nin; i++) {
		c->in_names[i] = strdup(g->vals[g->inputs[i]].name);
		c->in_dtype[i] = g->vals[g->inputs[i]].dtype;
	}
	for (int i = 0; i < c->nout; i++)
		c->out_names[i] = strdup(g->vals[g->outputs[i]].name);
	ir_graph_free(g);
	for (int i = 0; i < c->nin; i++)
		if (!c->in_names[i])
			return ir_err(e, "out of memory");
	for (int i = 0; i < c->nout; i++)
		if (!c->out_names[i])
			return ir_err(e, "out of memory");
	return 0;
}

/* An argument kept in pool (freed by the caller). */
static char *arg(char **pool, int *np, const char *fmt, const char *a, const char *b)
{
	size_t n = strlen(fmt) + strlen(a) + strlen(b) + 1;
	char *s = malloc(n);

	if (s) {
		snprintf(s, n, fmt, a, b);
		pool[(*np)++] = s;
	}
	return s;
}

static int frozen_input(int freeze, int i, int dtype)
{
	return freeze && (ir_dtype_is_int(dtype) || (freeze > 1 && i > 0));
}

/* ipu-compile with inputs frozen by level `freeze` (0 none, 1 integer
 * inputs, 2 all but the first). */
static int compile(struct tcase *c, int freeze, char *last, size_t len)
{
	char *argv[MAXARGS], *pool[MAXARGS], bin[4096], in[4096];
	int na = 0, np = 0, rc;

	snprintf(bin, sizeof(bin), "%s/ipu-compile", c->bindir);
	argv[na++] = bin;
	argv[na++] = arg(pool, &np, "-i%s/model.onnx%s", c->dir, "");
	argv[na++] = arg(pool, &np, "-o%s/m.ipuef%s", c->tmp, "");
	argv[na++] = "--target";
	argv[na++] = "tiles=16,tile-mem=1MiB";
	for (int i = 0; i < c->nin; i++) {
		snprintf(in, sizeof(in), "%s/test_data_set_0/input_%d.pb", c->dir, i);
		if (frozen_input(freeze, i, c->in_dtype[i])) {
			argv[na++] = "--freeze";
			argv[na++] = arg(pool, &np, "%s=%s", c->in_names[i], in);
		}
	}
	argv[na] = NULL;
	for (int i = 0; i < na; i++)
		if (!argv[i]) {
			snprintf(last, len, "out of memory");
			rc = -1;
			goto out;
		}
	rc = run(c, argv, last, len);
out:
	for (int i = 0; i < np; i++)
		free(pool[i]);
	return rc;
}

static int execute(struct tcase *c, int freeze, char *last, size_t len)
{
	char *argv[MAXARGS], *pool[MAXARGS], bin[4096], in[4096], out[300];
	int na = 0, np = 0, rc;

	snprintf(bin, sizeof(bin), "%s/ipu-run", c->bindir);
	argv[na++] = bin;
	argv[na++] = arg(pool, &np, "%s/m.ipuef%s", c->tmp, "");
	argv[na++] = "--device";
	argv[na++] = "model:tiles=16,tile_mem=1MiB,workers=1";
	argv[na++] = "--warmup=0";
	argv[na++] = "--iterations=0";
	argv[na++] = "--inflight=1";
	for (int i = 0; i < c->nin; i++) {
		if (frozen_input(freeze, i, c->in_dtype[i]))
			continue;
		snprintf(in, sizeof(in), "%s/test_data_set_0/input_%d.pb", c->dir, i);
		argv[na++] = "--input";
		argv[na++] = arg(pool, &np, "%s=%s", c->in_names[i], in);
	}
	for (int i = 0; i < c->nout; i++) {
		char k[16];

		snprintf(k, sizeof(k), "%d", i);
		snprintf(out, sizeof(out), "%s/out_%s.pb", c->tmp, k);
		argv[na++] = "--output";
		argv[na++] = arg(pool, &np, "%s=%s", c->out_names[i], out);
	}
	argv[na] = NULL;
	for (int i = 0; i < na; i++)
		if (!argv[i]) {
			snprintf(last, len, "out of memory");
			rc = -1;
			goto out;
		}
	rc = run(c, argv, last, len);
out:
	for (int i = 0; i < np; i++)
		free(pool[i]);
	return rc;
}

/* The expected output's type as the device gives it (float64 is computed
 * in float32, int16/uint16 in int32, uint32 carried in int64). */
static int device_type(int dt)
{
	return dt == IR_F64 ? IR_F32 : dt == IR_I16 || dt == IR_U16 ? IR_I32 : dt == IR_U32 ? IR_I64 : dt;
}

static int matches(const struct ir_tensor *got, const struct ir_tensor *want, char *msg, size_t len)
{
	int lowp = want->dtype == IR_F16 || want->dtype == IR_BF16;
	double rtol = lowp ? 1e-2 : 1e-3, atol = lowp ? 1e-2 : 1e-7;
	int64_t n = ir_numel(want->rank, want->dims);

	if (got->dtype != device_type(want->dtype) || got->rank != want->rank ||
	    memcmp(got->dims, want->dims, sizeof(int64_t) * (size_t)want->rank)) {
		snprintf(msg, len, "%s of rank %d, expected %s of rank %d (or its shape differs)",
			 ir_dtype_name(got->dtype), got->rank, ir_dtype_name(want->dtype), want->rank);
		return 0;
	}
	for (int64_t i = 0; i < n; i++) {
		if (ir_dtype_is_float(want->dtype)) {
			double a = ir_get_f(got->data, got->dtype, (size_t)i);
			double b = ir_get_f(want->data, want->dtype, (size_t)i);

			if ((isnan(a) && isnan(b)) || (isinf(b) && a == b))
				continue;
			if (!(fabs(a - b) <= atol + rtol * fabs(b))) {
				snprintf(msg, len, "element %lld: got %.9g, expected %.9g", (long long)i, a, b);
				return 0;
			}
		} else if (ir_get_i(got->data, got->dtype, (size_t)i) !=
			   ir_get_i(want->data, want->dtype, (size_t)i)) {
			snprintf(msg, len, "element %lld: got %lld, expected %lld", (long long)i,
				 (long long)ir_get_i(got->data, got->dtype, (size_t)i),
				 (long long)ir_get_i(want->data, want->dtype, (size_t)i));
			return 0;
		}
	}
	return 1;
}

/* The compile failed because an input must be a constant. */
static int needs_const(const char *msg)
{
	return strstr(msg, "compile-time constant") || strstr(msg, "must be constant") ||
	       strstr(msg, "must be a constant") || strstr(msg, "must be constants");
}

/* An input file ipu-run cannot carry (no device type, beyond float32). */
static int input_refused(const char *msg)
{
	return strstr(msg, "beyond float32's range") || strstr(msg, "has no runtime type");
}

static const char *classify(struct tcase *c, int *frozen)
{
	struct ir_error e = { "" };
	char last[2048], path[300];
	int freeze, rc;

	*frozen = 0;
	rc = load(c, &e);
	if (rc) {
		snprintf(c->msg, sizeof(c->msg), "%s", e.msg);
		return rc > 0 ? "unsupported" : "no-data";
	}
	for (freeze = 0;; freeze++) {
		rc = compile(c, freeze, last, sizeof(last));
		if (rc == 0)
			break;
		if (rc < 0 || !needs_const(last) || freeze == 2) {
			snprintf(c->msg, sizeof(c->msg), "%s", last);
			return rc < 0 ? "wrong" : "unsupported";
		}
	}
	*frozen = freeze > 0;
	rc = execute(c, freeze, last, sizeof(last));
	if (rc) {
		snprintf(c->msg, sizeof(c->msg), "%s", last);
		return rc > 0 && input_refused(last) ? "unsupported" : "wrong";
	}
	for (int i = 0; i < c->nout; i++) {
		struct ir_tensor got;
		char m[400];
		int ok;

		snprintf(path, sizeof(path), "%s/out_%d.pb", c->tmp, i);
		if (onnx_load_tensor_file(path, &got, NULL, &e)) {
			snprintf(c->msg, sizeof(c->msg), "output %d: %s", i, e.msg);
			return "wrong";
		}
		ok = matches(&got, &c->want[i], m, sizeof(m));
		ir_tensor_free(&got);
		unlink(path);
		if (!ok) {
			snprintf(c->msg, sizeof(c->msg), "output %d: %s", i, m);
			return "wrong";
		}
	}
	return "pass";
}

int main(int argc, char **argv)
{
	struct tcase c;
	const char *tmpdir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	const char *result;
	char exe[300];
	int frozen;

	if (argc != 3) {
		fprintf(stderr, "usage: onnx_cli_case BINDIR CASEDIR\n");
		return 2;
	}
	memset(&c, 0, sizeof(c));
	c.bindir = argv[1];
	c.dir = argv[2];
	c.name = strrchr(c.dir, '/') ? strrchr(c.dir, '/') + 1 : c.dir;
	snprintf(c.tmp, sizeof(c.tmp), "%s/onnx-cli.XXXXXX", tmpdir);
	if (!mkdtemp(c.tmp)) {
		fprintf(stderr, "onnx_cli_case: cannot create a folder in %s: %s\n", tmpdir,
			strerror(errno));
		return 1;
	}
	result = classify(&c, &frozen);
	printf("%-12s %-60s %s%s\n", result, c.name, frozen ? "[inputs frozen] " : "", c.msg);
	snprintf(exe, sizeof(exe), "%s/m.ipuef", c.tmp);
	unlink(exe);
	rmdir(c.tmp);
	for (int i = 0; i < MAXT; i++) {
		ir_tensor_free(&c.in[i]);
		ir_tensor_free(&c.want[i]);
		free(c.in_names[i]);
		free(c.out_names[i]);
	}
	return 0;
}
