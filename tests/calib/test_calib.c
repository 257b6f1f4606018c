/* SPDX-License-Identifier: MIT */
/*
 * test_calib.c - calibration: .npz reading (archives written with libzip,
 * then damaged on purpose), each loss against hand-computed values, the
 * scale search on known distributions, statistics and the precision
 * report on small graphs, and the sensitivity ranking.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zip.h>

#include "calib/calib.h"
#include "eval/eval.h"
#include "harness.h"
#include "ipu/fp8.h"
#include "ipu/npy.h"
#include "ipu/passes.h"

/* ---- .npz ------------------------------------------------------------ */

struct member {
	const char *name;
	void *data;
	size_t len;
};

/* An .npy of a float32 array [n] with values base + i. */
static struct member npy_f32(const char *name, int n, float base)
{
	struct ipurt_npy a = { 0 };
	float *v = malloc((size_t)n * sizeof(float));
	struct member m = { name, NULL, 0 };
	char err[256];

	for (int i = 0; i < n; i++)
		v[i] = base + (float)i;
	a.dtype = IPURT_DT_F32;
	a.rank = 1;
	a.dims[0] = (uint64_t)n;
	a.data = v;
	a.size = (size_t)n * sizeof(float);
	if (ipurt_npy_encode(&a, &m.data, &m.len, err, sizeof(err)))
		fprintf(stderr, "npy encode: %s\n", err);
	free(v);
	return m;
}

/* Writes a zip with the members (deflated or stored); returns its bytes. */
static unsigned char *make_zip(const struct member *m, int n, int deflate, size_t *len)
{
	char path[] = "/tmp/test_calib_zipXXXXXX";
	int fd = mkstemp(path), code = 0;
	zip_t *z;
	unsigned char *buf = NULL;
	FILE *f;
	long size;

	if (fd < 0)
		return NULL;
	close(fd);
	z = zip_open(path, ZIP_TRUNCATE, &code);
	for (int i = 0; z && i < n; i++) {
		zip_source_t *s = zip_source_buffer(z, m[i].data, m[i].len, 0);
		zip_int64_t idx = s ? zip_file_add(z, m[i].name, s, ZIP_FL_ENC_UTF_8) : -1;

		if (idx < 0 || zip_set_file_compression(z, (zip_uint64_t)idx,
							deflate ? ZIP_CM_DEFLATE : ZIP_CM_STORE, 0))
			fprintf(stderr, "zip add: %s\n", zip_strerror(z));
	}
	if (!z || zip_close(z)) {
		unlink(path);
		return NULL;
	}
	f = fopen(path, "rb");
	if (f && !fseek(f, 0, SEEK_END) && (size = ftell(f)) > 0 && !fseek(f, 0, SEEK_SET)) {
		buf = malloc((size_t)size);
		if (buf && fread(buf, 1, (size_t)size, f) != (size_t)size) {
			free(buf);
			buf = NULL;
		}
		*len = (size_t)size;
	}
	if (f)
		fclose(f);
	unlink(path);
	return buf;
}

TEST(npz_roundtrip_stored_and_deflated)
{
	struct member m[2] = { npy_f32("x.npy", 5, 1.0f), npy_f32("long name.npy", 300, -2.0f) };

	for (int deflate = 0; deflate < 2; deflate++) {
		size_t len = 0;
		unsigned char *zbuf = make_zip(m, 2, deflate, &len);
		struct ipu_npz z;
		struct ir_error e = { "" };

		REQUIRE(zbuf);
		REQUIRE(ipu_npz_parse(zbuf, len, "mem.npz", &z, &e) == 0);
		CHECK_EQ_INT(z.n, 2);
		CHECK(!strcmp(z.names[0], "x"));
		CHECK(!strcmp(z.names[1], "long name"));
		CHECK_EQ_INT(z.arrays[0].dtype, IR_F32);
		CHECK_EQ_INT(z.arrays[1].dims[0], 300);
		CHECK(((float *)z.arrays[0].data)[4] == 5.0f);
		CHECK(((float *)z.arrays[1].data)[299] == 297.0f);
		ipu_npz_free(&z);
		free(zbuf);
	}
	free(m[0].data);
	free(m[1].data);
}

static void expect_bad(const void *buf, size_t len, const char *needle)
{
	struct ipu_npz z;
	struct ir_error e = { "" };

	CHECK(ipu_npz_parse(buf, len, "bad.npz", &z, &e) == -1);
	CHECK_MSG(strstr(e.msg, needle) != NULL, "message '%s' lacks '%s'", e.msg, needle);
	CHECK_EQ_INT(z.n, 0);
}

/* Offset of the first local file header's CRC and sizes. */
#define LFH_CRC 14
#define LFH_CSIZE 18

/* Replaces every occurrence of `from` by `to` (same length) in buf: how
 * archives libzip refuses to write (duplicate or control-byte names) are
 * made. */
static void patch(unsigned char *buf, size_t len, const char *from, const char *to)
{
	size_t n = strlen(from);

	for (size_t i = 0; i + n <= len; i++)
		if (!memcmp(buf + i, from, n))
			memcpy(buf + i, to, n);
}

static unsigned char *find(unsigned char *buf, size_t len, const char *what, size_t n)
{
	for (size_t i = 0; i + n <= len; i++)
		if (!memcmp(buf + i, what, n))
			return buf + i;
	return NULL;
}

TEST(npz_hostile_archives)
{
	struct member m[2] = { npy_f32("a.npy", 64, 0.0f), npy_f32("b.npy", 8, 0.0f) };
	struct member notnpy[1] = { { "readme.txt", m[0].data, m[0].len } };
	/* not ASCII: libzip marks the name UTF-8 and returns it as stored */
	struct member ctrl[1] = { { "a\xc3\xa9Xb.npy", m[0].data, m[0].len } };
	size_t len = 0, l2 = 0;
	unsigned char *zbuf = make_zip(m, 2, 0, &len), *copy, *magic;
	unsigned char junk[100];

	REQUIRE(zbuf);
	/* not a zip at all, and an empty buffer */
	memset(junk, 'A', sizeof(junk));
	expect_bad(junk, sizeof(junk), "not a readable .npz");
	expect_bad("", 0, "holds no arrays");
	/* truncated: the central directory is gone */
	expect_bad(zbuf, len / 2, "not a readable .npz");
	/* a payload byte flipped: the CRC no longer matches (stored member:
	 * the floats start 128 bytes after the .npy magic) */
	copy = malloc(len);
	REQUIRE(copy);
	memcpy(copy, zbuf, len);
	magic = find(copy, len, "\x93NUMPY", 6);
	REQUIRE(magic);
	magic[128 + 100] ^= 0x55;
	expect_bad(copy, len, "'a.npy' is damaged");
	/* the local header's CRC changed: inconsistent with the directory */
	memcpy(copy, zbuf, len);
	copy[LFH_CRC] ^= 1;
	expect_bad(copy, len, "inconsistent");
	/* two members of one name */
	memcpy(copy, zbuf, len);
	patch(copy, len, "b.npy", "a.npy");
	expect_bad(copy, len, "bad.npz");
	free(copy);
	free(zbuf);
	/* a member that is not .npy, a name with an escape sequence */
	zbuf = make_zip(notnpy, 1, 1, &l2);
	REQUIRE(zbuf);
	expect_bad(zbuf, l2, "not an .npy file");
	free(zbuf);
	zbuf = make_zip(ctrl, 1, 1, &l2);
	REQUIRE(zbuf);
	patch(zbuf, l2, "\xa9Xb.npy", "\xa9\033b.npy");
	/* libzip finds such an archive inconsistent before the name is seen */
	expect_bad(zbuf, l2, "bad.npz");
	free(zbuf);
	/* a member that is not a valid .npy: the runtime reader's message */
	{
		struct member bad[1] = { { "c.npy", "\x93NUMPY\x01\x00garbage", 16 } };

		zbuf = make_zip(bad, 1, 1, &l2);
		REQUIRE(zbuf);
		expect_bad(zbuf, l2, "member 'c.npy'");
		free(zbuf);
	}
	free(m[0].data);
	free(m[1].data);
}

TEST(npz_file_errors)
{
	struct ipu_npz z;
	struct ir_error e = { "" };

	CHECK(ipu_npz_read("/nonexistent/x.npz", &z, &e) == -1);
	CHECK(strstr(e.msg, "/nonexistent/x.npz") != NULL);
	CHECK(ipu_npz_read("/dev/null", &z, &e) == -1);
	CHECK(strstr(e.msg, "not a regular file") != NULL);
}

/* ---- losses ---------------------------------------------------------- */

TEST(losses_against_hand_computed_values)
{
	const double x[] = { 1, 2, -3, 0 }, q[] = { 1, 2.5, -2, 0.5 }, w[] = { 2, 1, 1, 0 };

	/* errors 0, .5, 1, .5 */
	CHECK(fabs(ipu_calib_loss_pairs(IPU_CALIB_MSE, x, q, NULL, 4) - 0.375) < 1e-15);
	CHECK(fabs(ipu_calib_loss_pairs(IPU_CALIB_MAE, x, q, NULL, 4) - 0.5) < 1e-15);
	CHECK(fabs(ipu_calib_loss_pairs(IPU_CALIB_SNR, x, q, NULL, 4) - 1.5 / 14) < 1e-15);
	/* sum xq = 1 + 5 + 6 = 12, sum x^2 = 14, sum q^2 = 11.5 */
	CHECK(fabs(ipu_calib_loss_pairs(IPU_CALIB_COS_DIST, x, q, NULL, 4) - (1 - 12 / sqrt(161))) < 1e-15);
	/* weighted: W = 4; sum w e^2 = .25 + 1 = 1.25; sum w |e| = 1.5;
	 * sum w x^2 = 2 + 4 + 9 = 15; sum w q^2 = 2 + 6.25 + 4; sum w xq = 2 + 5 + 6 */
	CHECK(fabs(ipu_calib_loss_pairs(IPU_CALIB_MSE, x, q, w, 4) - 1.25 / 4) < 1e-15);
	CHECK(fabs(ipu_calib_loss_pairs(IPU_CALIB_MAE, x, q, w, 4) - 1.5 / 4) < 1e-15);
	CHECK(fabs(ipu_calib_loss_pairs(IPU_CALIB_SNR, x, q, w, 4) - 1.25 / 15) < 1e-15);
	CHECK(fabs(ipu_calib_loss_pairs(IPU_CALIB_COS_DIST, x, q, w, 4) - (1 - 13 / sqrt(15 * 12.25))) < 1e-15);
	/* exact: every loss 0 */
	for (int l = 0; l < IPU_CALIB_LOSS_COUNT; l++)
		if (l != IPU_CALIB_KLD)
			CHECK(ipu_calib_loss_pairs(l, x, x, NULL, 4) == 0);
	CHECK(isnan(ipu_calib_loss_pairs(IPU_CALIB_KLD, x, q, NULL, 4)));
}

TEST(loss_names)
{
	struct ir_error e = { "" };

	CHECK_EQ_INT(ipu_calib_loss_parse("mse", &e), IPU_CALIB_MSE);
	CHECK_EQ_INT(ipu_calib_loss_parse("cos_dist", &e), IPU_CALIB_COS_DIST);
	CHECK_EQ_INT(ipu_calib_loss_parse("kld", &e), IPU_CALIB_KLD);
	CHECK_EQ_INT(ipu_calib_loss_parse("l2", &e), -1);
	CHECK(strstr(e.msg, "mse, mae, snr, kld or cos_dist") != NULL);
	for (int l = 0; l < IPU_CALIB_LOSS_COUNT; l++)
		CHECK_EQ_INT(ipu_calib_loss_parse(ipu_calib_loss_name(l), &e), l);
}

/* A test format: integers -127..127 times 2^s (round half away). */
static double q_int8(const void *ctx, int s, double x)
{
	double v = round(ldexp(x, -s));

	(void)ctx;
	if (v > 127)
		v = 127;
	if (v < -127)
		v = -127;
	return ldexp(v, s);
}

/* A test format: a float with 4 exponent bits (bias 7), 3 mantissa bits,
 * subnormals, saturating at 448 (OCP E4M3's values), round half to even. */
static double q_e4m3(const void *ctx, int s, double x)
{
	double a = fabs(ldexp(x, -s)), r;
	int ex;

	(void)ctx;
	if (a == 0)
		return 0;
	frexp(a, &ex);			/* a = m 2^ex, m in [0.5, 1) */
	ex -= 1;			/* a = 1.f 2^ex */
	if (ex < -6)
		ex = -6;		/* subnormal spacing 2^-9 */
	r = ldexp(nearbyint(ldexp(a, 3 - ex)), ex - 3);
	if (r > 448)
		r = 448;
	return ldexp(x < 0 ? -r : r, s);
}

TEST(kld_against_hand_computed_value)
{
	static struct ipu_calib_hist h;
	struct ipu_calib_format f = { q_int8, NULL, -8, 4, "int8" };
	int b1 = -IPU_CALIB_HIST_LO * IPU_CALIB_HIST_PER_OCTAVE;	/* [1, 1.011) */
	int b2 = b1 + 20;	/* about 1.24 */
	int b3 = b1 + 101;	/* about 2.99 */
	const double eps = IPU_CALIB_KLD_EPS, norm = 1 + eps * 161;
	double q0, q1;

	ipu_calib_hist_init(&h);
	h.bins[b1] = 3;
	h.bins[b2] = 1;
	h.bins[b3] = 4;
	h.count = 8;
	h.absmax = 3.1;
	/* scale 0: 1.0 and 1.24 store as 1 (octave [1, 2)), 2.99 as 3 ([2, 4)):
	 * P = Q = 1/2, 1/2 over two of the 161 bins (160 octaves and zero) */
	q0 = (0.5 + eps) / norm;
	CHECK(fabs(ipu_calib_hist_loss(&h, &f, 0, IPU_CALIB_KLD) -
		   (0.5 * log(0.5 / q0) * 2)) < 1e-12);
	/* scale -6: the largest value is 127/64 = 1.98, so 2.99 saturates into
	 * [1, 2): Q = 1, 0 there */
	q0 = (1 + eps) / norm;
	q1 = eps / norm;
	CHECK(fabs(ipu_calib_hist_loss(&h, &f, -6, IPU_CALIB_KLD) -
		   (0.5 * log(0.5 / q0) + 0.5 * log(0.5 / q1))) < 1e-12);
	/* scale 2: steps of 4 flush 1.0 and 1.24 to zero, 2.99 rounds to 4 */
	CHECK(fabs(ipu_calib_hist_loss(&h, &f, 2, IPU_CALIB_KLD) - log(0.5 / (eps / norm))) < 1e-12);
}

/* n seeded samples of a normal distribution (Box-Muller) times sigma. */
static void normal(float *v, int n, double sigma, unsigned seed)
{
	for (int i = 0; i < n; i += 2) {
		double u1, u2, r;

		seed = seed * 1103515245u + 12345u;
		u1 = ((seed >> 8) % 1000000 + 1) / 1000001.0;
		seed = seed * 1103515245u + 12345u;
		u2 = ((seed >> 8) % 1000000) / 1000000.0;
		r = sqrt(-2 * log(u1));
		v[i] = (float)(sigma * r * cos(2 * M_PI * u2));
		if (i + 1 < n)
			v[i + 1] = (float)(sigma * r * sin(2 * M_PI * u2));
	}
}

static void hist_of(struct ipu_calib_hist *h, float *v, int n)
{
	struct ir_tensor t = { IR_F32, 1, { n }, v };

	ipu_calib_hist_init(h);
	ipu_calib_hist_add(h, &t);
}

TEST(scale_choice_uniform_on_an_integer_grid)
{
	static struct ipu_calib_hist h;
	struct ipu_calib_format f = { q_int8, NULL, -8, 8, "int8" };
	float v[2001];
	struct ir_error e = { "" };

	/* -100..100 in steps of 0.1: scale 0 has room (127) and the finest
	 * step that does; -1 clips at 63.5, 1 doubles the step */
	for (int i = 0; i < 2001; i++)
		v[i] = (float)(-100 + 0.1 * i);
	hist_of(&h, v, 2001);
	CHECK(h.absmax > 99.99 && h.absmax < 100.01);
	CHECK_EQ_INT(h.count, 2001);
	for (int l = 0; l < IPU_CALIB_LOSS_COUNT; l++) {
		int s = 99;

		CHECK(ipu_calib_choose_scale(&h, &f, l, &s, NULL, &e) == 0);
		CHECK_MSG(s == 0, "loss %s chose %d", ipu_calib_loss_name(l), s);
	}
}

TEST(scale_choice_normal_in_an_8bit_float)
{
	static struct ipu_calib_hist h;
	struct ipu_calib_format f = { q_e4m3, NULL, -32, 31, "e4m3" };
	static float v[20000];
	struct ir_error e = { "" };
	int s_mse, s_snr, s_abs, s;

	normal(v, 20000, 1.0, 7);
	hist_of(&h, v, 20000);
	/* the smallest scale at which absmax does not clip */
	s_abs = (int)ceil(log2(h.absmax / 448));
	CHECK(ipu_calib_choose_scale(&h, &f, IPU_CALIB_MSE, &s_mse, NULL, &e) == 0);
	CHECK(ipu_calib_choose_scale(&h, &f, IPU_CALIB_SNR, &s_snr, NULL, &e) == 0);
	/* relative steps are the same at every scale: a smaller scale only
	 * clips, a larger one only pushes small values into subnormals */
	CHECK_MSG(s_mse == s_abs, "mse chose %d, absmax gives %d", s_mse, s_abs);
	/* for one tensor the signal power is fixed: same minimiser */
	CHECK_EQ_INT(s_snr, s_mse);
	/* every loss: scaling the data by 2^k moves the scale by k */
	for (int l = 0; l < IPU_CALIB_LOSS_COUNT; l++) {
		static struct ipu_calib_hist h2;
		static float w[20000];
		int s2;

		for (int i = 0; i < 20000; i++)
			w[i] = ldexpf(v[i], 5);
		hist_of(&h2, w, 20000);
		CHECK(ipu_calib_choose_scale(&h, &f, l, &s, NULL, &e) == 0);
		CHECK(ipu_calib_choose_scale(&h2, &f, l, &s2, NULL, &e) == 0);
		CHECK_MSG(s2 == s + 5, "loss %s: %d then %d", ipu_calib_loss_name(l), s, s2);
		/* and never a scale that clips more than a few outliers */
		CHECK_MSG(s >= s_abs - 2 && s <= s_abs + 8, "loss %s chose %d (absmax: %d)",
			  ipu_calib_loss_name(l), s, s_abs);
	}
}

TEST(scale_choice_edge_cases)
{
	static struct ipu_calib_hist h;
	struct ipu_calib_format f = { q_e4m3, NULL, 2, 9, "e4m3" };
	struct ir_error e = { "" };
	float zeros[4] = { 0, 0, -0.0f, 0 }, nonfinite[3] = { INFINITY, NAN, 1 };
	int s = 99;

	hist_of(&h, zeros, 4);
	CHECK(ipu_calib_choose_scale(&h, &f, IPU_CALIB_MSE, &s, NULL, &e) == 0);
	CHECK_EQ_INT(s, 2);	/* nearest 0 of the allowed range */
	hist_of(&h, nonfinite, 3);
	CHECK_EQ_INT(h.nonfinite, 2);
	CHECK_EQ_INT(h.count, 1);
	CHECK(h.absmax == 1);
	CHECK(ipu_calib_choose_scale(&h, &f, 77, &s, NULL, &e) == -1);
}

/* ---- graphs ---------------------------------------------------------- */

static int input(struct ir_graph *g, const char *name, int rank, const int64_t *d)
{
	int v = ir_value_add(g, name, NULL);

	ir_value_set_shape(&g->vals[v], IR_F32, rank, d);
	ir_graph_add_input(g, v, NULL);
	return v;
}

static int cf32(struct ir_graph *g, const char *name, int rank, const int64_t *d, const float *vals)
{
	struct ir_tensor t;
	int v = ir_value_add(g, name, NULL);

	ir_tensor_alloc(&t, IR_F32, rank, d, NULL);
	memcpy(t.data, vals, ir_tensor_bytes(&t));
	ir_value_set_const(&g->vals[v], &t);
	return v;
}

static int node(struct ir_graph *g, const char *name, const char *op, const int *in, int nin,
		const char *out)
{
	int o = ir_value_add(g, out, NULL);

	ir_node_add(g, name, op, in, nin, &o, 1, NULL);
	return o;
}

/* x[4] -> Mul(w1) -> Add(w2) -> Relu -> y, inferred */
static struct ir_graph *small_graph(const float *w1, const float *w2)
{
	struct ir_graph *g = ir_graph_new(NULL);
	struct ir_infer_opts io = { 0 };
	int64_t d[] = { 4 };
	int in[2], a, b, y;
	struct ir_error e;

	in[0] = input(g, "x", 1, d);
	in[1] = cf32(g, "w1", 1, d, w1);
	a = node(g, "scale", "Mul", in, 2, "a");
	in[0] = a;
	in[1] = cf32(g, "w2", 1, d, w2);
	b = node(g, "shift", "Add", in, 2, "b");
	y = node(g, "act", "Relu", &b, 1, "y");
	ir_graph_add_output(g, y, NULL);
	if (ir_infer(g, &io, &e)) {
		fprintf(stderr, "infer: %s\n", e.msg);
		ir_graph_free(g);
		return NULL;
	}
	return g;
}

TEST(samples_from_npz_shapes_and_errors)
{
	const float w[4] = { 1, 1, 1, 1 };
	struct ir_graph *g = small_graph(w, w);
	struct ipu_npz z = { 0 };
	struct ipu_calib_samples s;
	struct ir_error e = { "" };
	char *names[1] = { "x" };
	const int64_t dims[2] = { 3, 4 };
	struct ir_tensor a;

	REQUIRE(g);
	REQUIRE(ir_tensor_alloc(&a, IR_F32, 2, dims, &e) == 0);
	for (int i = 0; i < 12; i++)
		((float *)a.data)[i] = (float)i;
	z.n = 1;
	z.names = names;
	z.arrays = &a;
	/* [3, 4]: three samples of x[4] */
	REQUIRE(ipu_calib_samples_from_npz(&z, g, 0, &s, &e) == 0);
	CHECK_EQ_INT(s.n, 3);
	CHECK(((float *)s.in[2].data)[3] == 11);
	ipu_calib_samples_free(&s);
	REQUIRE(ipu_calib_samples_from_npz(&z, g, 2, &s, &e) == 0);
	CHECK_EQ_INT(s.n, 2);
	ipu_calib_samples_free(&s);
	/* [4]: one sample */
	a.rank = 1;
	a.dims[0] = 4;
	REQUIRE(ipu_calib_samples_from_npz(&z, g, 0, &s, &e) == 0);
	CHECK_EQ_INT(s.n, 1);
	ipu_calib_samples_free(&s);
	/* wrong shape, wrong dtype, wrong name */
	a.dims[0] = 5;
	CHECK(ipu_calib_samples_from_npz(&z, g, 0, &s, &e) == -1);
	CHECK(strstr(e.msg, "has shape [5]; input 'x' needs [4]") != NULL);
	a.dims[0] = 4;
	a.dtype = IR_I32;
	CHECK(ipu_calib_samples_from_npz(&z, g, 0, &s, &e) == -1);
	CHECK(strstr(e.msg, "is int32 but the input is float32") != NULL);
	a.dtype = IR_F32;
	names[0] = "X";
	CHECK(ipu_calib_samples_from_npz(&z, g, 0, &s, &e) == -1);
	CHECK(strstr(e.msg, "'X' is not an input") != NULL);
	ir_tensor_free(&a);
	ir_graph_free(g);
}

TEST(collect_statistics_of_every_activation)
{
	const float w1[4] = { 2, -2, 0.5f, 1 }, w2[4] = { 0, 0, 0, -100 };
	struct ir_graph *g = small_graph(w1, w2);
	struct ipu_calib_samples s;
	struct ipu_calib *c;
	struct ir_error e = { "" };
	const struct ipu_calib_tensor *t;

	REQUIRE(g);
	REQUIRE(ipu_calib_samples_random(g, 3, 42, &s, &e) == 0);
	c = ipu_calib_collect(g, &s, 0, IPU_CALIB_MSE, &e);
	REQUIRE(c);
	CHECK_EQ_INT(s.n, 0);	/* taken over */
	CHECK_EQ_INT(c->n, 4);	/* x, a, b, y */
	t = ipu_calib_find(c, "a");
	REQUIRE(t);
	CHECK_EQ_INT(t->hist.count, 12);
	/* |a| <= 2 * 1 */
	CHECK_MSG(t->hist.absmax <= 2 && t->hist.absmax > 0.5, "absmax %g", t->hist.absmax);
	t = ipu_calib_find(c, "b");
	REQUIRE(t);
	CHECK_MSG(t->hist.absmax >= 99 && t->hist.absmax <= 101, "absmax %g", t->hist.absmax);
	/* Relu: the shifted element is negative in every sample */
	t = ipu_calib_find(c, "y");
	REQUIRE(t);
	CHECK(t->hist.zeros >= 3);
	CHECK(ipu_calib_find(c, "w1") == NULL);	/* constants are not activations */
	{
		struct ipu_calib_format f = { q_e4m3, NULL, -32, 31, "e4m3" };
		int scale = 0;

		CHECK_EQ_INT(ipu_calib_activation_scale(c, "b", &f, &scale, &e), 1);
		/* 100 needs 2^s * 448 >= 100: s >= -2 */
		CHECK_MSG(scale == -2, "scale %d", scale);
		CHECK_EQ_INT(ipu_calib_activation_scale(c, "nothing", &f, &scale, &e), 0);
	}
	ipu_calib_free(c);
	ir_graph_free(g);
}

TEST(compare_fp16_and_identical_graphs)
{
	const float w1[4] = { 3.3f, -2.1f, 0.7f, 1.9f }, w2[4] = { 0.1f, 0.2f, 0.3f, 0.4f };
	struct ir_graph *g = small_graph(w1, w2), *h;
	struct ipu_calib_samples s;
	struct ipu_calib_report r;
	struct ir_error e = { "" };
	struct ir_fp16_opts fo = { NULL, 0 };
	struct ir_infer_opts io = { 0 };

	REQUIRE(g);
	REQUIRE(ipu_calib_samples_random(g, 2, 9, &s, &e) == 0);
	/* the graph against itself: exact */
	REQUIRE(ipu_calib_compare(g, g, &s, 0, "fp32", &r, &e) == 0);
	REQUIRE(r.n == 3);
	CHECK(!strcmp(r.l[0].node, "scale") && !strcmp(r.l[1].node, "shift") &&
	      !strcmp(r.l[2].node, "act"));
	for (int i = 0; i < r.n; i++) {
		CHECK(r.l[i].max_abs_err == 0);
		CHECK(isinf(r.l[i].snr_db) && r.l[i].snr_db > 0);
		CHECK(r.l[i].cos_dist == 0);
		CHECK_EQ_INT(r.l[i].count, 8);
	}
	ipu_calib_report_free(&r);
	/* float16: every error within half an ulp per rounding (2^-11
	 * relative), a few roundings deep, and not zero */
	h = ir_graph_clone(g, &e);
	REQUIRE(h);
	REQUIRE(ir_pass_fp16(h, &fo, &e) >= 0);
	REQUIRE(ir_infer(h, &io, &e) == 0);
	REQUIRE(ipu_calib_compare(g, h, &s, 0, "fp16", &r, &e) == 0);
	REQUIRE(r.n == 3);
	for (int i = 0; i < r.n; i++) {
		CHECK(!strcmp(r.l[i].dtype, "float16"));
		CHECK_MSG(r.l[i].rel_err > 0 && r.l[i].rel_err < 4 * ldexp(1, -11),
			  "%s: rel %g", r.l[i].node, r.l[i].rel_err);
		CHECK(r.l[i].snr_db > 55 && r.l[i].snr_db < 120);
		CHECK(r.l[i].cos_dist < 1e-6);
	}
	{
		char path[] = "/tmp/test_calib_reportXXXXXX";
		int fd = mkstemp(path);
		char buf[8192];
		FILE *f;
		size_t n = 0;

		REQUIRE(fd >= 0);
		close(fd);
		CHECK(ipu_calib_report_write_json(&r, path, &e) == 0);
		f = fopen(path, "r");
		if (f) {
			n = fread(buf, 1, sizeof(buf) - 1, f);
			fclose(f);
		}
		buf[n] = 0;
		CHECK(strstr(buf, "\"name\": \"shift\"") != NULL);
		CHECK(strstr(buf, "\"precision\": \"fp16\"") != NULL);
		unlink(path);
		CHECK(ipu_calib_report_write_json(&r, "/nonexistent/dir/r.json", &e) == -1);
		CHECK(strstr(e.msg, "/nonexistent/dir/r.json") != NULL);
	}
	ipu_calib_report_free(&r);
	ipu_calib_samples_free(&s);
	ir_graph_free(h);
	ir_graph_free(g);
}

TEST(rank_layers_by_sensitivity)
{
	/* scale's weights are powers of two (exact in e4m3), shift's are not */
	const float w1[4] = { 2, -0.5f, 4, 1 }, w2[4] = { 0.1f, 0.33f, 1.7f, 2.9f };
	struct ir_graph *g = small_graph(w1, w2);
	struct ipu_calib_samples s;
	struct ipu_calib *c;
	struct ir_error e = { "" };
	struct ipu_calib_format f = { q_e4m3, NULL, -32, 31, "e4m3" };
	int nodes[2] = { 0, 1 }, order[2];
	double score[2];

	REQUIRE(g);
	REQUIRE(ipu_calib_samples_random(g, 2, 5, &s, &e) == 0);
	c = ipu_calib_collect(g, &s, 0, IPU_CALIB_MSE, &e);
	REQUIRE(c);
	REQUIRE(ipu_calib_rank_layers(c, g, nodes, 2, &f, &f, 0, order, score, &e) == 0);
	CHECK_EQ_INT(order[0], 1);
	CHECK_EQ_INT(order[1], 0);
	CHECK(score[1] > score[0]);
	CHECK(score[0] > 0);	/* the inputs x are rounded too */
	nodes[1] = 7;
	CHECK(ipu_calib_rank_layers(c, g, nodes, 2, &f, &f, 0, order, score, &e) == -1);
	ipu_calib_free(c);
	ir_graph_free(g);
}

TEST(fp8_formats_through_the_device_encoder)
{
	static struct ipu_calib_hist h;
	static float v[20000];
	struct ipu_calib_format f143, f152;
	struct ir_error e = { "" };
	int s;

	REQUIRE(ipu_calib_fp8_format(IPU_FP8_143, &f143, &e) == 0);
	REQUIRE(ipu_calib_fp8_format(IPU_FP8_152, &f152, &e) == 0);
	CHECK(ipu_calib_fp8_format(7, &f143, &e) == -1);
	CHECK(!strcmp(f143.name, "F143") && !strcmp(f152.name, "F152"));
	CHECK_EQ_INT(f143.scale_min, IPU_FP8_SCALE_MIN);
	CHECK_EQ_INT(f143.scale_max, IPU_FP8_SCALE_MAX);
	/* F143: 240 is the largest finite value, 0.3 rounds to 0.3125 (step
	 * 1/32 in [0.25, 0.5)), beyond saturates; scale 2 multiplies by 4 */
	CHECK(f143.quantize(f143.ctx, 0, 1000) == 240);
	CHECK(f143.quantize(f143.ctx, 0, 0.3) == 0.3125);
	CHECK(f143.quantize(f143.ctx, 2, 1.2) == 1.25);
	CHECK(f152.quantize(f152.ctx, 0, 1e6) == 57344);
	normal(v, 20000, 3.0, 21);
	hist_of(&h, v, 20000);
	CHECK_EQ_INT(f143.scale_for_absmax(f143.ctx, h.absmax), ipu_fp8_scale_for_absmax(h.absmax, IPU_FP8_143));
	/* as with the e4m3 oracle: mse takes the smallest scale that does not
	 * clip, the one from absmax */
	CHECK(ipu_calib_choose_scale(&h, &f143, IPU_CALIB_MSE, &s, NULL, &e) == 0);
	CHECK_MSG(s == ipu_fp8_scale_for_absmax(h.absmax, IPU_FP8_143), "mse %d, absmax %d", s,
		  ipu_fp8_scale_for_absmax(h.absmax, IPU_FP8_143));
	CHECK(ipu_calib_choose_scale(&h, &f152, IPU_CALIB_MSE, &s, NULL, &e) == 0);
	CHECK(s <= ipu_fp8_scale_for_absmax(h.absmax, IPU_FP8_152) + 1);
}

/* x[1, 4] -> MatMul(W[4, 3]) -> Relu -> MatMul(W2[3, 2]) -> y */
static struct ir_graph *mlp(void)
{
	struct ir_graph *g = ir_graph_new(NULL);
	struct ir_infer_opts io = { 0 };
	int64_t dx[] = { 1, 4 }, dw[] = { 4, 3 }, dw2[] = { 3, 2 };
	float w[12], w2[6];
	int in[2], a, r, y;
	struct ir_error e;

	for (int i = 0; i < 12; i++)
		w[i] = (float)(0.37 * (i % 5) - 0.8);
	for (int i = 0; i < 6; i++)
		w2[i] = (float)(1 << (i % 3));	/* powers of two: exact in fp8 */
	in[0] = input(g, "x", 2, dx);
	in[1] = cf32(g, "w", 2, dw, w);
	a = node(g, "fc1", "MatMul", in, 2, "a");
	r = node(g, "act", "Relu", &a, 1, "r");
	in[0] = r;
	in[1] = cf32(g, "w2", 2, dw2, w2);
	y = node(g, "fc2", "MatMul", in, 2, "y");
	ir_graph_add_output(g, y, NULL);
	if (ir_infer(g, &io, &e)) {
		ir_graph_free(g);
		return NULL;
	}
	return g;
}

TEST(layer_inputs_and_fp8_ranking)
{
	struct ir_graph *g = mlp();
	struct ipu_calib_samples s;
	struct ipu_calib *c;
	struct ir_error e = { "" };
	struct ipu_calib_format f;
	static struct ipu_calib_hist h;
	const struct ipu_calib_tensor *tx, *tr;
	int scale, expect, nodes[2] = { 0, 2 }, order[2];
	double score[2];

	REQUIRE(g);
	CHECK_EQ_INT(ipu_calib_layer_activation(g, 0), 0);
	CHECK_EQ_INT(ipu_calib_layer_activation(g, 1), -1);	/* Relu */
	CHECK_EQ_INT(ipu_calib_layer_activation(g, 2), 0);
	REQUIRE(ipu_calib_fp8_format(IPU_FP8_143, &f, &e) == 0);
	REQUIRE(ipu_calib_samples_random(g, 4, 77, &s, &e) == 0);
	c = ipu_calib_collect(g, &s, 0, IPU_CALIB_MSE, &e);
	REQUIRE(c);
	/* the layer inputs are x and r: their histograms added */
	tx = ipu_calib_find(c, "x");
	tr = ipu_calib_find(c, "r");
	REQUIRE(tx && tr);
	ipu_calib_hist_init(&h);
	h.absmax = fmax(tx->hist.absmax, tr->hist.absmax);
	h.count = tx->hist.count + tr->hist.count;
	h.zeros = tx->hist.zeros + tr->hist.zeros;
	for (int b = 0; b < IPU_CALIB_HIST_BINS; b++)
		h.bins[b] = tx->hist.bins[b] + tr->hist.bins[b];
	REQUIRE(ipu_calib_choose_scale(&h, &f, IPU_CALIB_MSE, &expect, NULL, &e) == 0);
	CHECK_EQ_INT(ipu_calib_layer_input_scale(c, g, &f, &scale, &e), 1);
	CHECK_EQ_INT(scale, expect);
	/* weights only, scales from absmax: fc2's weights are exact, fc1's
	 * are not */
	REQUIRE(ipu_calib_rank_layers(c, g, nodes, 2, NULL, &f, 1, order, score, &e) == 0);
	CHECK_EQ_INT(order[0], 0);
	CHECK(score[0] > 1e-5);
	CHECK(score[1] == 0);
	/* with the activations in fp8 too, fc2 is no longer exact */
	REQUIRE(ipu_calib_rank_layers(c, g, nodes, 2, &f, &f, 1, order, score, &e) == 0);
	CHECK(score[1] > 0);
	/* the same kept by name, found from the lowering's node names */
	{
		struct ipu_calib_ranking rk;
		double sc = -1;

		REQUIRE(ipu_calib_rank_graph(c, g, &f, &f, 1, &rk, &e) == 0);
		CHECK_EQ_INT(rk.n, 2);
		CHECK(ipu_calib_ranking_score(&rk, "fc2", &sc) == 1 && sc == score[1]);
		CHECK(ipu_calib_ranking_score(&rk, "fc1/MatMul", &sc) == 1 && sc == score[0]);
		CHECK(ipu_calib_ranking_score(&rk, "fc1x", &sc) == 0);
		CHECK(ipu_calib_ranking_score(&rk, "act", &sc) == 0);
		ipu_calib_ranking_free(&rk);
	}
	ipu_calib_free(c);
	ir_graph_free(g);
}

/* A model size: 1000 bytes, plus 24 with fc1 kept and 12 with fc2 kept;
 * ctx: 1 when the choice with no layer kept cannot be built. */
static int mlp_size(void *ctx, const char *const *keep, int n, double *bytes,
		    struct ir_error *e)
{
	(void)e;
	if (ctx && *(int *)ctx && !n)
		return 1;
	*bytes = 1000;
	for (int i = 0; i < n; i++)
		*bytes += !strcmp(keep[i], "fc1") ? 24 : !strcmp(keep[i], "fc2") ? 12 : 1e9;
	return 0;
}

TEST(fp8_auto_skip_by_output_error_and_size)
{
	struct ir_graph *g = mlp();
	struct ipu_calib_samples s;
	struct ipu_calib *c;
	struct ir_error e = { "" };
	struct ipu_calib_format f;
	struct ipu_calib_auto_skip a;
	struct ir_tensor y, yc;
	int nodes[2] = { 0, 2 }, unbuildable = 1;
	char none[2] = { 0, 0 };

	REQUIRE(g);
	REQUIRE(ipu_calib_fp8_format(IPU_FP8_143, &f, &e) == 0);
	REQUIRE(ipu_calib_samples_random(g, 4, 78, &s, &e) == 0);
	c = ipu_calib_collect(g, &s, 1, IPU_CALIB_MSE, &e);
	REQUIRE(c);
	/* nothing converted: the float32 graph's outputs exactly */
	REQUIRE(ir_eval_graph(g, &c->samples.in[c->samples.ninputs], &y, &e) == 0);
	REQUIRE(ipu_calib_eval_converted(c, g, nodes, 2, none, NULL, &f, 2, 1, &yc, &e) == 0);
	CHECK(!memcmp(y.data, yc.data, ir_tensor_bytes(&y)));
	ir_tensor_free(&yc);
	CHECK(ipu_calib_eval_converted(c, g, nodes, 2, none, NULL, &f, 2, 4, &yc, &e) == -1);
	ir_tensor_free(&y);
	/* a target every choice meets: nothing kept */
	REQUIRE(ipu_calib_choose_auto_skip(c, g, NULL, &f, 2, 1e9, 1, mlp_size, NULL, &a, &e) == 0);
	CHECK_EQ_INT(a.n, 2);
	CHECK_EQ_INT(a.nkeep, 0);
	CHECK(a.met && a.error == a.error_all && a.error_all > 1e-4);
	CHECK(a.size == 1000 && a.size_all == 1000 && a.size_none == 1036);
	ipu_calib_auto_skip_free(&a);
	/* exact output: fc2's weights are powers of two, so only fc1 is kept
	 * (it alone costs error), although it costs more bytes */
	REQUIRE(ipu_calib_choose_auto_skip(c, g, NULL, &f, 2, 0, 1, mlp_size, NULL, &a, &e) == 0);
	CHECK_EQ_INT(a.nkeep, 1);
	CHECK(a.met && a.error == 0);
	CHECK(!strcmp(a.names[0], "fc1") && !strcmp(a.names[1], "fc2"));
	CHECK(a.alone[0] > 1e-4 && a.alone[1] == 0);
	CHECK(a.cost[0] == 24 && a.cost[1] == 12 && a.size == 1024);
	ipu_calib_auto_skip_free(&a);
	/* a budget under fc1's bytes: nothing kept, the target not met */
	REQUIRE(ipu_calib_choose_auto_skip(c, g, NULL, &f, 2, 0, 1020.0 / 1036, mlp_size, NULL,
					   &a, &e) == 0);
	CHECK_EQ_INT(a.nkeep, 0);
	CHECK(!a.met && a.size == 1000);
	ipu_calib_auto_skip_free(&a);
	/* errors: a model that does not build in fp8, a budget beyond 1 */
	CHECK(ipu_calib_choose_auto_skip(c, g, NULL, &f, 2, 0, 1, mlp_size, &unbuildable, &a,
					 &e) == -1);
	CHECK(strstr(e.msg, "does not build") != NULL);
	CHECK(ipu_calib_choose_auto_skip(c, g, NULL, &f, 2, 0, 2, mlp_size, NULL, &a, &e) == -1);
	CHECK(strstr(e.msg, "budget") != NULL);
	ipu_calib_free(c);
	ir_graph_free(g);
}

static double q143(double x, int s)
{
	return ipu_fp8_to_f32(ipu_fp8_from_f32((float)x, IPU_FP8_143, s), IPU_FP8_143, s);
}

TEST(fp8_activation_emulation_and_report)
{
	struct ir_graph *g = mlp(), *h;
	struct ipu_calib_samples s;
	struct ipu_calib_report r;
	struct ir_error e = { "" };
	struct ir_tensor y;
	struct ir_value *w;
	const float *x;
	double expect[2] = { 0, 0 }, a[3];

	REQUIRE(g);
	h = ir_graph_clone(g, &e);
	REQUIRE(h);
	/* what the fp8 pass leaves: fc1's weight on the F143 grid (scale -1),
	 * its input converted at scale -2 on the device */
	w = &h->vals[h->nodes[0].in[1]];
	for (int i = 0; i < 12; i++)
		ir_set_f(w->data, IR_F32, (size_t)i, q143(ir_get_f(w->data, IR_F32, (size_t)i), -1));
	REQUIRE(ir_attr_set_int(&h->nodes[0], "fp8_weight_input", 1, &e) == 0);
	REQUIRE(ir_attr_set_int(&h->nodes[0], "fp8_input_format", IPU_FP8_143, &e) == 0);
	REQUIRE(ir_attr_set_int(&h->nodes[0], "fp8_input_scale", -2, &e) == 0);
	REQUIRE(ipu_calib_samples_random(g, 1, 3, &s, &e) == 0);
	REQUIRE(ir_eval_graph_visit(h, s.in, &y, ipu_calib_emulate_fp8_input, NULL, &e) == 0);
	/* by hand: x and w rounded to F143, products in double, float32
	 * results, Relu, then fc2 exactly */
	x = s.in[0].data;
	for (int j = 0; j < 3; j++) {
		a[j] = 0;
		for (int k = 0; k < 4; k++)
			a[j] += q143(x[k], -2) * ir_get_f(w->data, IR_F32, (size_t)(k * 3 + j));
		a[j] = (float)a[j];
		if (a[j] < 0)
			a[j] = 0;
	}
	for (int j = 0; j < 2; j++) {
		for (int k = 0; k < 3; k++)
			expect[j] += a[k] * (double)(1 << ((k * 2 + j) % 3));
		CHECK_MSG(fabs(ir_get_f(y.data, IR_F32, (size_t)j) - (float)expect[j]) <= 1e-6 * fabs(expect[j]),
			  "y[%d] = %g, by hand %g", j, ir_get_f(y.data, IR_F32, (size_t)j), expect[j]);
	}
	ir_tensor_free(&y);
	/* the report sees the fp8 error at fc1 and everything after it */
	REQUIRE(ipu_calib_compare(g, h, &s, 0, "fp8", &r, &e) == 0);
	REQUIRE(r.n == 3);
	CHECK(!strcmp(r.l[0].node, "fc1") && r.l[0].rel_err > 1e-3);
	CHECK(r.l[2].rel_err > 0);
	ipu_calib_report_free(&r);
	/* a format the device does not have is refused, naming the node */
	REQUIRE(ir_attr_set_int(&h->nodes[0], "fp8_input_format", 9, &e) == 0);
	CHECK(ir_eval_graph_visit(h, s.in, NULL, ipu_calib_emulate_fp8_input, NULL, &e) == -1);
	CHECK(strstr(e.msg, "fc1") != NULL);
	ipu_calib_samples_free(&s);
	ir_graph_free(h);
	ir_graph_free(g);
}

/* A layer with a bias (Gemm, Conv) gets its data input converted too; the bias stays. */
TEST(fp8_activation_emulation_with_bias)
{
	struct ir_graph *g = ir_graph_new(NULL);
	struct ir_infer_opts io = { 0 };
	struct ipu_calib_samples s;
	struct ir_error e = { "" };
	struct ir_tensor y;
	int64_t dx[] = { 1, 4 }, dw[] = { 4, 3 }, db[] = { 3 };
	float w[12], b[3] = { 0.25f, -1.5f, 3.0f };
	int in[3], out;
	const float *x;

	REQUIRE(g);
	for (int i = 0; i < 12; i++)
		w[i] = (float)(1 << (i % 3)) * ((i & 1) ? -1.0f : 1.0f);	/* exact in fp8 */
	in[0] = input(g, "x", 2, dx);
	in[1] = cf32(g, "w", 2, dw, w);
	in[2] = cf32(g, "b", 1, db, b);
	out = node(g, "fc", "Gemm", in, 3, "y");
	ir_graph_add_output(g, out, NULL);
	REQUIRE(ir_infer(g, &io, &e) == 0);
	REQUIRE(ir_attr_set_int(&g->nodes[0], "fp8_weight_input", 1, &e) == 0);
	REQUIRE(ir_attr_set_int(&g->nodes[0], "fp8_input_format", IPU_FP8_143, &e) == 0);
	REQUIRE(ir_attr_set_int(&g->nodes[0], "fp8_input_scale", -2, &e) == 0);
	REQUIRE(ipu_calib_samples_random(g, 1, 5, &s, &e) == 0);
	REQUIRE(ir_eval_graph_visit(g, s.in, &y, ipu_calib_emulate_fp8_input, NULL, &e) == 0);
	x = s.in[0].data;
	for (int j = 0; j < 3; j++) {
		double a = b[j], raw = b[j];

		for (int k = 0; k < 4; k++) {
			a += q143(x[k], -2) * w[k * 3 + j];
			raw += (double)x[k] * w[k * 3 + j];
		}
		CHECK_MSG(fabs(ir_get_f(y.data, IR_F32, (size_t)j) - a) <= 1e-5 * (fabs(a) + 1),
			  "y[%d] = %g, by hand %g (unconverted %g)", j,
			  ir_get_f(y.data, IR_F32, (size_t)j), a, raw);
	}
	ir_tensor_free(&y);
	ipu_calib_samples_free(&s);
	ir_graph_free(g);
}

int main(int argc, char **argv)
{
	TH_INIT(argc, argv);
	RUN(npz_roundtrip_stored_and_deflated);
	RUN(npz_hostile_archives);
	RUN(npz_file_errors);
	RUN(losses_against_hand_computed_values);
	RUN(loss_names);
	RUN(kld_against_hand_computed_value);
	RUN(scale_choice_uniform_on_an_integer_grid);
	RUN(scale_choice_normal_in_an_8bit_float);
	RUN(scale_choice_edge_cases);
	RUN(samples_from_npz_shapes_and_errors);
	RUN(collect_statistics_of_every_activation);
	RUN(compare_fp16_and_identical_graphs);
	RUN(rank_layers_by_sensitivity);
	RUN(fp8_formats_through_the_device_encoder);
	RUN(layer_inputs_and_fp8_ranking);
	RUN(fp8_auto_skip_by_output_error_and_size);
	RUN(fp8_activation_emulation_and_report);
	RUN(fp8_activation_emulation_with_bias);
	return TH_DONE();
}
