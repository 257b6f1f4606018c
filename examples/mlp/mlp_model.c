// SPDX-License-Identifier: MIT
/* mlp_model.c - see mlp_model.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipu/codelet.h"
#include "mlp_model.h"

static uint64_t rng_next(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545F4914F6CDD1DULL;
}

static float uniform(uint64_t *s, float scale)
{
	return scale * ((float)(rng_next(s) >> 40) / (float)(1u << 24) * 2.0f - 1.0f);
}

int mlp_init(struct mlp *m, uint32_t batch, uint32_t in, uint32_t hidden, uint32_t out,
	     uint64_t seed)
{
	uint64_t s = seed | 1;
	size_t i;

	memset(m, 0, sizeof(*m));
	m->batch = batch;
	m->in = in;
	m->hidden = hidden;
	m->out = out;
	m->w1 = malloc((size_t)in * hidden * sizeof(float));
	m->b1 = malloc(hidden * sizeof(float));
	m->w2 = malloc((size_t)hidden * out * sizeof(float));
	m->b2 = malloc(out * sizeof(float));
	if (!m->w1 || !m->b1 || !m->w2 || !m->b2) {
		mlp_free(m);
		return -1;
	}
	for (i = 0; i < (size_t)in * hidden; i++)
		m->w1[i] = uniform(&s, sqrtf(6.0f / (float)(in + hidden)));
	for (i = 0; i < hidden; i++)
		m->b1[i] = uniform(&s, 0.1f);
	for (i = 0; i < (size_t)hidden * out; i++)
		m->w2[i] = uniform(&s, sqrtf(6.0f / (float)(hidden + out)));
	for (i = 0; i < out; i++)
		m->b2[i] = uniform(&s, 0.1f);
	return 0;
}

void mlp_free(struct mlp *m)
{
	free(m->w1);
	free(m->b1);
	free(m->w2);
	free(m->b2);
	memset(m, 0, sizeof(*m));
}

void mlp_input(const struct mlp *m, uint64_t seed, float *x)
{
	uint64_t s = seed | 1;
	size_t i;

	for (i = 0; i < (size_t)m->batch * m->in; i++)
		x[i] = uniform(&s, 1.0f);
}

void *mlp_build(struct mlp *m, uint32_t dev_tiles, uint32_t tile_mem, uint32_t ntiles,
		size_t *len, struct ipu_graph_stats *st, char *err, size_t errlen)
{
	struct ipu_graph *g = ipu_graph_create(dev_tiles, tile_mem);
	uint64_t xd[2] = { m->batch, m->in };
	ipu_tensor x, h, y;
	uint32_t sx, sy;
	ipu_step seq;
	void *img = NULL;
	struct ipu_mm_args a1 = { 0 }, a2 = { 0 };

	if (!g) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	x = ipu_graph_add_tensor(g, "x", IPUX_DT_F32, 2, xd);
	ipu_graph_map_linear(g, x, 0, ntiles, m->in);
	sx = ipu_graph_add_stream(g, "x", IPUX_STREAM_H2D, m->batch * m->in * 4);
	seq = ipu_step_sequence(g);
	ipu_step_append(g, seq, ipu_step_stream_copy(g, sx,
						      &(struct ipu_slice){ x, 0, (uint64_t)m->batch * m->in }, 1));
	a1.a = x;
	a1.b = IPU_GRAPH_INVALID;
	a1.b_data = m->w1;
	a1.bias = IPU_GRAPH_INVALID;
	a1.bias_data = m->b1;
	a1.act = IPUX_UN_RELU;
	a1.M = m->batch;
	a1.N = m->hidden;
	a1.K = m->in;
	a1.first_tile = 0;
	a1.ntiles = ntiles;
	a1.name = "layer1";
	h = ipu_ops_matmul(g, seq, &a1, &m->plan1);
	a2 = a1;
	a2.a = h;
	a2.b_data = m->w2;
	a2.bias_data = m->b2;
	a2.act = -1;
	a2.N = m->out;
	a2.K = m->hidden;
	a2.name = "layer2";
	y = ipu_ops_matmul(g, seq, &a2, &m->plan2);
	sy = ipu_graph_add_stream(g, "y", IPUX_STREAM_D2H, m->batch * m->out * 4);
	ipu_step_append(g, seq, ipu_step_stream_copy(g, sy,
						      &(struct ipu_slice){ y, 0, (uint64_t)m->batch * m->out }, 1));
	ipu_graph_add_program(g, seq);
	if (ipu_graph_compile(g, &img, len, st))
		snprintf(err, errlen, "%s", ipu_graph_error(g));
	ipu_graph_destroy(g);
	return img;
}

void mlp_reference(const struct mlp *m, const float *x, double *y)
{
	double *h = malloc(m->hidden * sizeof(double));
	uint32_t b, i, j;

	if (!h)
		return;
	for (b = 0; b < m->batch; b++) {
		for (j = 0; j < m->hidden; j++) {
			double s = m->b1[j];

			for (i = 0; i < m->in; i++)
				s += (double)x[b * m->in + i] * m->w1[(size_t)i * m->hidden + j];
			h[j] = s > 0 ? s : 0;
		}
		for (j = 0; j < m->out; j++) {
			double s = m->b2[j];

			for (i = 0; i < m->hidden; i++)
				s += h[i] * m->w2[(size_t)i * m->out + j];
			y[b * m->out + j] = s;
		}
	}
	free(h);
}
