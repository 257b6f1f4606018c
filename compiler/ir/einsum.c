/* SPDX-License-Identifier: MIT */
/* einsum.c - Einsum's equation parser (einsum.h).  Letters are labels
 * 0-51; the axes "..." stands for get labels 52 and up, one per broadcast
 * axis, right-aligned across the inputs as numpy does. */
#include <stdio.h>
#include <string.h>

#include "einsum.h"

#define ELL_BASE 52
#define ELL (-1)

static int letter(char c)
{
	if (c >= 'a' && c <= 'z')
		return c - 'a';
	if (c >= 'A' && c <= 'Z')
		return 26 + c - 'A';
	return -2;
}

/* Tokens of a term (letters, ELL for "..."): their count, or -1. */
static int tokens(const char *s, size_t n, int *tok, char *msg, size_t len)
{
	int c = 0, ell = 0;

	for (size_t i = 0; i < n; i++) {
		if (c >= IR_MAX_RANK + 1)
			return snprintf(msg, len, "a term has too many labels"), -1;
		if (s[i] == '.') {
			if (ell || i + 3 > n || strncmp(s + i, "...", 3))
				return snprintf(msg, len, "'.' must come as one '...' per term"), -1;
			ell = 1;
			tok[c++] = ELL;
			i += 2;
		} else if (letter(s[i]) < 0) {
			return snprintf(msg, len, "'%c' is not a label (letters a-z, A-Z)", s[i]), -1;
		} else {
			tok[c++] = letter(s[i]);
		}
	}
	return c;
}

int einsum_parse(const char *eq, int nin, const int *rank, const int64_t (*dims)[IR_MAX_RANK],
		 struct einsum *es, char *msg, size_t len)
{
	char buf[512];
	size_t n = 0;
	const char *arrow, *p;
	int tok[EINSUM_MAX_IN][IR_MAX_RANK + 1], ntok[EINSUM_MAX_IN], ell[EINSUM_MAX_IN];
	int maxell = 0, count[EINSUM_MAX_LABELS] = { 0 };

	memset(es, 0, sizeof(*es));
	for (const char *c = eq; *c; c++)
		if (*c != ' ') {
			if (n + 1 >= sizeof(buf))
				return snprintf(msg, len, "equation too long"), -1;
			buf[n++] = *c;
		}
	buf[n] = 0;
	if (nin < 1 || nin > EINSUM_MAX_IN)
		return snprintf(msg, len, "%d inputs (1 to %d supported)", nin, EINSUM_MAX_IN), -1;
	es->nin = nin;
	arrow = strstr(buf, "->");
	p = buf;
	for (int t = 0; t < nin; t++) {
		const char *end = strchr(p, ',');
		int letters = 0, has = 0;

		if (!end || (arrow && end > arrow))
			end = arrow ? arrow : buf + n;
		if ((t < nin - 1) != (*end == ','))
			return snprintf(msg, len, "the equation's terms are not the %d inputs", nin), -1;
		if (rank[t] > IR_MAX_RANK || (ntok[t] = tokens(p, (size_t)(end - p), tok[t], msg, len)) < 0)
			return -1;
		for (int k = 0; k < ntok[t]; k++) {
			letters += tok[t][k] != ELL;
			has |= tok[t][k] == ELL;
		}
		if (has ? letters > rank[t] : letters != rank[t])
			return snprintf(msg, len, "term %d has %d labels for an input of rank %d", t, letters, rank[t]), -1;
		ell[t] = has ? rank[t] - letters : 0;
		if (ell[t] > maxell)
			maxell = ell[t];
		es->rank[t] = rank[t];
		p = end + (*end == ',');
	}
	if (arrow ? p != arrow : *p != 0)
		return snprintf(msg, len, "the equation has more terms than the %d inputs", nin), -1;
	if (ELL_BASE + maxell > EINSUM_MAX_LABELS)
		return snprintf(msg, len, "too many broadcast axes"), -1;
	for (int i = 0; i < EINSUM_MAX_LABELS; i++)
		es->size[i] = -1;
	for (int t = 0; t < nin; t++) {
		int c = 0;

		for (int k = 0; k < ntok[t]; k++) {
			int nl = tok[t][k] == ELL ? ell[t] : 1;

			for (int j = 0; j < nl; j++, c++) {
				int l = tok[t][k] == ELL ? ELL_BASE + (maxell - ell[t]) + j : tok[t][k];
				int64_t d = dims[t][c];

				es->lab[t][c] = l;
				count[l]++;
				if (es->size[l] < 0 || (l >= ELL_BASE && es->size[l] == 1))
					es->size[l] = d;
				else if (d != es->size[l] && !(l >= ELL_BASE && d == 1))
					return snprintf(msg, len, "label '%c' has extents %lld and %lld",
							l < 26 ? 'a' + l : l < 52 ? 'A' + l - 26 : '.',
							(long long)es->size[l], (long long)d), -1;
			}
		}
	}
	es->nlabels = ELL_BASE + maxell;
	es->out_rank = 0;
	if (arrow) {
		int t2[IR_MAX_RANK + 1], nt = tokens(arrow + 2, strlen(arrow + 2), t2, msg, len);

		if (nt < 0)
			return -1;
		for (int k = 0; k < nt; k++) {
			int nl = t2[k] == ELL ? maxell : 1;

			if (t2[k] != ELL && !count[t2[k]])
				return snprintf(msg, len, "output label '%c' is not an input's",
						t2[k] < 26 ? 'a' + t2[k] : 'A' + t2[k] - 26), -1;
			for (int j = 0; j < nl; j++) {
				if (es->out_rank >= IR_MAX_RANK)
					return snprintf(msg, len, "output rank too large"), -1;
				es->out_lab[es->out_rank++] = t2[k] == ELL ? ELL_BASE + j : t2[k];
			}
		}
	} else {
		for (int k = 0; k < maxell; k++)
			es->out_lab[es->out_rank++] = ELL_BASE + k;
		for (int l = 0; l < ELL_BASE; l++)
			if (count[l] == 1) {
				if (es->out_rank >= IR_MAX_RANK)
					return snprintf(msg, len, "output rank too large"), -1;
				es->out_lab[es->out_rank++] = l;
			}
	}
	return 0;
}
