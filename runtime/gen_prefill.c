// SPDX-License-Identifier: MIT
/*
 * gen_prefill.c - a prompt through a decoder's prefill program: T tokens
 * a run instead of one run each, written into the same cache the decode
 * step then extends.  Positions are inputs, so the device computes each
 * token's cache row and attention mask from them; a prompt shorter than T
 * is padded and its pad rows, after the prompt, are overwritten by the
 * decode step at each position before any token reads them.
 */
#include <stdlib.h>
#include <string.h>

#include "gen_internal.h"
#include "rt_internal.h"

int gen_prefill_find(const struct ipuef_file *f, struct gen_prefill *pf, char *err, size_t errlen)
{
	memset(pf, 0, sizeof(*pf));
	if (!ipuef_find_program(f, IPUEF_PROGRAM_PREFILL))
		return 0;
	pf->ids = ipuef_find_anchor(f, IPUEF_PREFILL_PREFIX "input_ids");
	pf->pos = ipuef_find_anchor(f, IPUEF_PREFILL_PREFIX "position_ids");
	pf->next = ipuef_find_anchor(f, IPUEF_PREFILL_PREFIX "next_token");
	if (!pf->ids || !pf->pos || !pf->next || pf->ids->direction != IPUEF_INPUT ||
	    pf->pos->direction != IPUEF_INPUT || pf->next->direction != IPUEF_OUTPUT ||
	    !gen_is_int(pf->ids->dtype) || !gen_is_int(pf->pos->dtype) || !gen_is_int(pf->next->dtype) ||
	    gen_elems(pf->ids) != gen_elems(pf->pos) || gen_elems(pf->ids) != gen_elems(pf->next) ||
	    gen_elems(pf->ids) > UINT32_MAX)
		return ipu_errorf(err, errlen, IPURT_E_MODEL,
				  "the '%s' program needs inputs '%sinput_ids', '%sposition_ids' and output '%snext_token' of T integers each (one sequence)",
				  IPUEF_PROGRAM_PREFILL, IPUEF_PREFILL_PREFIX, IPUEF_PREFILL_PREFIX,
				  IPUEF_PREFILL_PREFIX);
	pf->tokens = (uint32_t)gen_elems(pf->ids);
	return 0;
}

int gen_prefill_run(struct ipurt_runner *r, const struct gen_prefill *pf, const int64_t *prompt,
		    uint32_t n, uint64_t positions, uint32_t *done, int64_t *next, uint32_t *runs,
		    char *err, size_t errlen)
{
	uint32_t T = pf->tokens;
	uint8_t *buf = calloc(3 * (size_t)T, 8);
	uint8_t *ids = buf, *pos = buf + 8 * (size_t)T, *nt = buf + 16 * (size_t)T;
	int rc = 0;

	*done = 0;
	if (!buf)
		return ipu_errorf(err, errlen, IPURT_E_NOMEM, "out of memory for a prefill of %u tokens", T);
	while (!rc && *done < n && *done + (uint64_t)T <= positions) {
		uint32_t k = n - *done < T ? n - *done : T;
		struct ipurt_tensor t[3];

		for (uint32_t i = 0; i < T; i++) {
			gen_put_int(ids, pf->ids->dtype, i, i < k ? prompt[*done + i] : 0);
			gen_put_int(pos, pf->pos->dtype, i, (int64_t)(*done + i));
		}
		gen_tensor_of(pf->ids, ids, &t[0]);
		gen_tensor_of(pf->pos, pos, &t[1]);
		gen_tensor_of(pf->next, nt, &t[2]);
		rc = rt_runner_run_program(r, IPUEF_PROGRAM_PREFILL, t, 3, err, errlen);
		if (rc)
			break;
		(*runs)++;
		*done += k;
		*next = gen_get_int(nt, pf->next->dtype, k - 1);
	}
	free(buf);
	return rc;
}
