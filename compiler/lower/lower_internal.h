/* SPDX-License-Identifier: MIT */
/* lower_internal.h - state shared by the lowering files. */
#ifndef IPU_LOWER_INTERNAL_H
#define IPU_LOWER_INTERNAL_H

#include "ipu/codelet.h"
#include "ipu/graph.h"
#include "ipu/lower.h"
#include "ops/registry.h"

/* Scratch memory: temporaries of one op (copied-in operand pieces,
 * partial sums, row blocks) are dead once the op's steps ran, so every op
 * reuses the same per-tile, per-dtype scratch tensors.  The lowering runs
 * twice: the first pass (measure) allocates each temporary as its own
 * tensor and records the peak per tile and dtype; the second allocates
 * those peaks once and hands out slices of them.  With memory reuse (the
 * default) there is no scratch: every temporary is its own tensor and the
 * graph builder's liveness shares its memory once the op has run. */
struct lw_scratch {
	uint64_t *top;		/* [tile * IPUX_DT_COUNT + dt] elements in use */
	uint64_t *peak;		/* same indexing: the most any op used */
	ipu_tensor *t;		/* pass 2: the scratch tensors */
	int measure;		/* 1: first pass */
};

/* Constant pieces frozen on a tile, so that every block of every op on
 * that tile that reads the same piece shares one copy (open addressing).
 * The first copy of a piece is its home (a slot with tile LW_HOME names
 * it): further tiles get a copy while they keep little, else the piece is
 * copied in per run from its home, so no constant is ever kept whole
 * beside its pieces. */
#define LW_HOME UINT32_MAX
struct lw_frozen {
	struct lw_frozen_slot {
		int v;		/* value, -1: empty slot */
		uint32_t tile;	/* LW_HOME: the piece's home copy */
		uint64_t off, rows, cols, ld;
		ipu_tensor t;
	} *slot;
	size_t n, cap;
};

/* lower_share.c: the constants of a second graph (a decoder's prefill)
 * that are the first graph's, byte for byte, kept once.  key[v]: the
 * first graph's value for a shared constant, base + v for any other
 * (NULL while the first graph is lowered: keys are its values). */
struct lw_seg {			/* a run of a constant frozen contiguously */
	int key;
	uint64_t start, len;	/* elements of the constant */
	ipu_tensor t;
	uint64_t toff;		/* where the run starts in t */
};
struct lw_gblk {		/* an embedding table's frozen column block */
	int key;
	int64_t c0, cb;
	uint32_t tile;
	ipu_tensor t;
};
struct lw_share {
	struct lw_frozen frozen;	/* both graphs' frozen pieces */
	const struct ir_graph *g1;
	int base;
	int *key;
	struct lw_seg *seg;
	size_t nseg, capseg;
	int sorted;
	struct { int key; ipu_tensor t; } *whole;	/* constants kept whole */
	size_t nwhole;
	struct lw_gblk *gblk;
	size_t ngblk;
	struct lw_mmplan {	/* a product's cut of its constant B */
		int key;
		int64_t pn, nw, pk;
	} *plan;
	size_t nplan;
	uint64_t shared_bytes;	/* the second graph's constants found shared */
	uint64_t copied_bytes;	/* copied in per run from the first's pieces */
	uint64_t frozen_again;	/* frozen copies of shared blocks where a tile
				 * had room (as the first graph makes them) */
};
int lw_share_first(struct lw_share *sh, const struct ir_graph *g);
int lw_share_second(struct lw_share *sh, const struct ir_graph *g, struct ir_error *e);
void lw_share_free(struct lw_share *sh);

struct lw {
	struct ipu_graph *gb;
	const struct ir_graph *g;
	ipu_tensor *vt;		/* tensor of each value (or INVALID) */
	/* per value: the I32 [1] tensor of a bounded value's run-time
	 * count (INVALID for every other value) */
	ipu_tensor *count;
	/* Estimated bytes per tile, what tiles are chosen by.  With memory
	 * reuse: what is kept for the whole program, the values still live
	 * and the current op's temporaries (released when they die);
	 * without: every byte ever placed there. */
	uint64_t *used;
	uint64_t *kept;		/* frozen constants per tile (whole program) */
	uint64_t *optemp;	/* the current op's temporaries per tile */
	/* per tile: the most bytes besides its frozen constants live at
	 * the end of any op so far.  A constant placed later is kept over
	 * the whole program, those earlier times included: its tile is
	 * chosen by kept + hi, not by what is live now */
	uint64_t *hi;
	uint64_t *base;		/* used[] when the current op began */
	uint64_t keep_limit;	/* frozen bytes a tile may hold before
				 * constants are exchanged in per run */
	int reuse;		/* memory reuse by liveness is on */
	int *last_use;		/* node index after which a value is dead */
	uint32_t *trefs;	/* live values per builder tensor */
	uint32_t ntrefs;
	struct lw_frozen frozen;
	uint32_t tiles, tile_mem;
	uint32_t cursor;	/* next tile to start spreading from */
	ipu_step seq;		/* program being built */
	struct ir_error *e;
	const struct ir_node *node;	/* node being lowered (messages) */
	uint64_t budget;	/* bytes a vertex's working set may use */
	uint64_t consts;	/* bytes of the graph's constants (each once) */
	struct lw_scratch *scr;	/* NULL: every temporary is its own tensor */
	uint8_t *absorbed;	/* per node: lowered with the node that feeds it */
	/* per value: the blocks its data stays in (lower_blocked.c), NULL:
	 * its tensor is l->vt[v] */
	struct lw_blocked **blk;
	struct lw_share *sh;	/* NULL: the graph's constants are its own */
};

/* The frozen table's key of constant v (lower_share.c). */
int lw_key(const struct lw *l, int v);
/* 1 if constant v is a constant of the first graph too. */
int lw_shared(const struct lw *l, int v);
/* The first graph's piece [rows x cols] of v (leading dim ld, from
 * element off) frozen in t: a source for the second graph. */
int lw_share_segments(struct lw *l, int v, uint64_t off, uint64_t rows, uint64_t cols,
		      uint64_t ld, ipu_tensor t);
/* A [nr x nc] block (leading dim ld, from element off) of shared constant
 * v in a temporary on tile, copied by *xch from the first graph's pieces:
 * 1, or 0 when they do not hold all of it. */
int lw_share_assemble(struct lw *l, int v, uint64_t off, int64_t ld, int64_t nr, int64_t nc,
		      uint32_t tile, ipu_step *xch, struct ipu_slice *out);
/* The first graph's whole tensor of constant v: 1 and *t, or 0. */
int lw_share_whole(struct lw *l, int v, ipu_tensor *t);
int lw_share_whole_add(struct lw *l, int v, ipu_tensor t);
/* The first graph's column blocks of embedding table v: 1, or 0. */
int lw_share_gather(struct lw *l, int v, const struct lw_gblk **blk, size_t *n);
int lw_share_gather_add(struct lw *l, int v, int64_t c0, int64_t cb, uint32_t tile, ipu_tensor t);
/* The first graph's cut of constant B of a product (columns pn of width
 * nw, K in pk): recorded by the first (0), 1 and the cut for the second
 * (0 when it has none), -1 on error. */
int lw_share_plan(struct lw *l, int v, int64_t *pn, int64_t *nw, int64_t *pk);

/* ipux dtype of an IR dtype, 0 if the device has none. */
uint32_t lw_dtype(int ir_dtype);
/* Error naming the current node. */
int lw_fail(struct lw *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Error naming the current node for a working set of `need` bytes that
 * does not fit the per-tile budget: "<what> needs N bytes on one tile, more
 * than the B bytes a tile gives one op (half of its M bytes of memory)". */
int lw_fail_mem(struct lw *l, uint64_t need, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Builder error (sticky) -> node error. */
int lw_check(struct lw *l);
/* A new tensor of n elements; name "<node>/<what>". */
ipu_tensor lw_tensor(struct lw *l, const char *what, uint32_t dtype, uint64_t n);
/* The tile with the least estimated use (ties: lowest index after cursor). */
uint32_t lw_pick_tile(struct lw *l);
/* The tile whose peak over the program (frozen constants and the most
 * live at once so far) is lowest: for blocks kept the whole program. */
uint32_t lw_pick_tile_kept(struct lw *l);
void lw_account(struct lw *l, uint32_t tile, uint64_t bytes);
/* Maps t (n elements of esize bytes) over up to `want` tiles starting at the
 * cursor; returns the number of tiles. */
int lw_spread(struct lw *l, ipu_tensor t, uint64_t n, uint32_t esize, uint32_t want);
/* A piece [begin, begin+count) of value v available on `tile`: a slice of
 * v's tensor if it is already there, a frozen constant copy for constants,
 * or a temporary filled by a copy added to exchange `xch` (created on first
 * use, *xch == INVALID before). */
int lw_piece(struct lw *l, int v, uint64_t begin, uint64_t count, uint32_t tile,
	     ipu_step *xch, struct ipu_slice *out);
/* A [nr x nc] block at rows r0.., columns c0.. of constant value v seen
 * as a row-major matrix with leading dim ld from element `base`, on
 * `tile`: the copy already frozen there; the block's first copy anywhere
 * (its home, frozen on `tile` whatever the tile keeps already); another
 * frozen copy while the tile keeps fewer than keep_limit bytes of
 * constants; or else a temporary filled per run from the block's home
 * (dead after the op). */
int lw_const_block(struct lw *l, int v, uint64_t base, int64_t ld, int64_t r0,
		   int64_t nr, int64_t c0, int64_t nc, uint32_t tile, ipu_step *xch,
		   struct ipu_slice *out);
/* 1 and the tile of the home copy of that block of constant v, if one
 * was frozen (by this graph or, for a shared constant, the first). */
int lw_const_home_tile(struct lw *l, int v, uint64_t base, int64_t ld, int64_t r0, int64_t nr,
		       int64_t c0, int64_t nc, uint32_t *tile);
/* A [nr x nc] block of row-major matrix value v (leading dim ld, base
 * offset base) on `tile`: lw_const_block for constants, else a temporary
 * filled by one exchange copy per row. */
int lw_block_piece(struct lw *l, int v, uint64_t base, int64_t ld, int64_t r0,
		   int64_t nr, int64_t c0, int64_t nc, uint32_t tile, ipu_step *xch,
		   struct ipu_slice *out);
/* The constant bias a MatMul's only reader adds (lower_bias.c). */
struct lw_mm_bias {
	int v;			/* the bias value, -1: none */
	int node;		/* the Add node */
	int axis;		/* 0: one element per row, 1: per column */
	int64_t len;		/* its elements (M or N) */
};
/* Finds the bias of MatMul n with an [M x N] product per batch; 1 if the
 * Add can be lowered with n (then n's output is also the Add's). */
int lw_mm_bias_find(const struct lw *l, const struct ir_node *n, int64_t M, int64_t N,
		    struct lw_mm_bias *b);
/* Adds to compute set cs a vertex that fills dst ([mb x nb] block at rows
 * m0.., columns n0.. on `tile`) with the bias. */
int lw_mm_bias_fill(struct lw *l, const struct lw_mm_bias *b, uint32_t cs, ipu_step *xch,
		    uint32_t tile, struct ipu_slice dst, int64_t m0, int64_t mb, int64_t n0,
		    int64_t nb);
/* The same block in float32 into dst: filled as float16 in cs_fill, then
 * converted by a CAST vertex added to cs_cast (a later compute set). */
int lw_mm_bias_f32(struct lw *l, const struct lw_mm_bias *b, uint32_t cs_fill, uint32_t cs_cast,
		   ipu_step *xch, uint32_t tile, struct ipu_slice dst, int64_t m0, int64_t mb,
		   int64_t n0, int64_t nb);
/* lower_act.c: a Relu, or a Clip with constant bounds, that is the only
 * reader of a product's result, lowered into the vertices that write the
 * result's final values (the MATMUL/CONV2D activation epilogue). */
struct lw_act {
	int node;		/* the activation node, -1: none */
	int kind;		/* 0 none, 1 Relu, 2 Clip */
	uint32_t lo, hi;	/* Clip's bounds (f32 bits) */
};
/* Finds the activation reading only value v (not fused when `never`, or
 * under IPU_LOWER_FUSE_ACT=0); when found, marks it absorbed and gives its
 * output v's tensor t (INVALID: v's blocks, v being blocked).  a->node is
 * -1 when there is none.  Returns 0. */
int lw_act_take(struct lw *l, int v, ipu_tensor t, int never, struct lw_act *a);
/* lw_act_take in two steps, for a Relu only (BINARY ADD_RELU has no
 * Clip): 1 if found (nothing marked yet), then lw_act_absorb once v's
 * tensor t (or its blocks) exists. */
int lw_act_find_relu(const struct lw *l, int v, int never, struct lw_act *a);
void lw_act_absorb(struct lw *l, int v, ipu_tensor t, const struct lw_act *a);
/* Adds a MATMUL vertex with params p5 [batch, M, N, K, flags] to cs, with
 * a's epilogue when a is not NULL; ipu_graph_add_vertex's result. */
int lw_mm_vertex(struct lw *l, uint32_t cs, const struct ipu_slice *ops, const uint32_t *p5,
		 const struct lw_act *a);
/* After node `i` ran: its values used for the last time are dead, and the
 * bytes of tensors no live value refers to leave the tiles' estimates. */
int lw_values_done(struct lw *l, int i);
/* Value v (a graph input) is live from the start. */
int lw_value_live(struct lw *l, int v);
void lw_frozen_free(struct lw_frozen *f);
/* 1 and the tile if [begin, begin+count) of computed value v (not a
 * constant) lies in one piece on one tile: a vertex there reads it in
 * place. */
int lw_range_tile(struct lw *l, int v, uint64_t begin, uint64_t count, uint32_t *tile);
/* Same for a builder tensor (not a value). */
int lw_piece_t(struct lw *l, ipu_tensor t, uint64_t begin, uint64_t count,
	       uint32_t tile, ipu_step *xch, struct ipu_slice *out);
/* A temporary of `count` elements of dtype dt on `tile`, dead after the
 * current op: a slice of the tile's scratch (see struct lw_scratch). */
int lw_temp(struct lw *l, const char *what, uint32_t dt, uint64_t count,
	    uint32_t tile, struct ipu_slice *out);
/* Starts a new op: its temporaries may reuse the previous op's scratch. */
void lw_temp_reset(struct lw *l);
/* The value's tensor (constants get one, spread over tiles, on demand). */
ipu_tensor lw_value_tensor(struct lw *l, int v);
/* Appends exchange (if any copies) then execute(cs) to the program. */
int lw_emit(struct lw *l, ipu_step xch, uint32_t cs);
uint32_t lw_f32bits(double v);

/* One more (d 1) or one fewer (d -1) live value refers to builder tensor
 * t (memory reuse: the tiles' estimates drop its bytes when none does). */
int lw_tref(struct lw *l, ipu_tensor t, int d);

/* lower_blocked.c: a value whose data stays in the blocks that made it
 * (a column-blocked MatMul's output), read through a map of its logical
 * runs to a store tensor whose pieces are the blocks. */
struct lw_blocked;
/* v's data is in blocks and no standard tensor of it was made yet. */
int lw_is_blocked(const struct lw *l, int v);
/* v's store (INVALID: v is not blocked). */
ipu_tensor lw_blocked_store(const struct lw *l, int v);
/* Makes v blocked: a store of numel elements of dtype dt, no blocks yet. */
int lw_blocked_new(struct lw *l, int v, uint32_t dt, uint64_t numel);
/* The next `count` elements of v's store, mapped on `tile` (a block). */
int lw_blocked_block(struct lw *l, int v, uint32_t tile, uint64_t count, struct ipu_slice *out);
/* Logical elements [lb, lb + n) of v are store elements [sb, sb + n). */
int lw_blocked_run(struct lw *l, int v, uint64_t lb, uint64_t n, uint64_t sb);
/* After the runs of a product (or of a chunk of it): sorts and checks them. */
int lw_blocked_done(struct lw *l, int v);
/* dst is src (an absorbed Add, an aliasing reshape): same blocks. */
void lw_blocked_alias(struct lw *l, int dst, int src);
void lw_blocked_free_all(struct lw *l, int nvals);
/* lw_block_piece / lw_piece / lw_range_tile of a blocked value. */
int lw_blocked_piece(struct lw *l, int v, uint64_t base, int64_t ld, int64_t r0, int64_t nr,
		     int64_t c0, int64_t nc, uint32_t tile, ipu_step *xch, struct ipu_slice *out);
int lw_blocked_range_tile(struct lw *l, int v, uint64_t begin, uint64_t count, uint32_t *tile);
/* 1 and the tile if the [nr x nc] block (as lw_block_piece) of v is one
 * block of its store: a reader computed there reads it in place. */
int lw_blocked_block_tile(struct lw *l, int v, uint64_t base, int64_t ld, int64_t r0, int64_t nr,
			  int64_t c0, int64_t nc, uint32_t *tile);
/* Blocked v in logical order: one slice of the store per run (merged
 * where runs continue each other), *out malloc'd. */
int lw_blocked_slices(struct lw *l, int v, struct ipu_slice **out, uint32_t *n);
/* 1 if value v made by node n is read, directly or through reshapes,
 * absorbed nodes and elementwise ops, as the A operand of a
 * MatMul (whose every column block reads all its rows). */
int lw_read_as_matmul_a(struct lw *l, const struct ir_node *n, int v, int depth);
/* The tiles to spread value v of `bytes` over: one per 8 KiB, and when a
 * product reads it as its A (lw_read_as_matmul_a), at least one per row:
 * every block of the product reads the rows it needs from these tiles, and
 * a tile holding many rows would send them to every block in turn. */
uint32_t lw_matmul_a_tiles(struct lw *l, int v, int64_t rows, uint64_t bytes);
/* The width of the column blocks of blocked v seen as [rows x cols]
 * when its first [rows x width] block is one piece of the store (a
 * product's output in column blocks of all its rows), else 0. */
int64_t lw_blocked_col_width(struct lw *l, int v, int64_t rows, int64_t cols);
/* The blocked value that the output v of node n (through an absorbed
 * bias and reshapes) is added to by a later Add, -1 if none: n may place
 * its blocks beside that value's, so that the Add runs in place. */
int lw_blocked_partner(struct lw *l, const struct ir_node *n, int v);
/* v's standard tensor, made from its blocks by an exchange appended now. */
ipu_tensor lw_blocked_materialise(struct lw *l, int v);
/* Copies elements [begin, begin + count) of computed value v (blocked or
 * not) into dst, adding the copies to *xch (created on first use). */
int lw_copy_in(struct lw *l, int v, uint64_t begin, uint64_t count, struct ipu_slice dst,
	       ipu_step *xch);
/* Elementwise node n whose full-shape operands are blocked alike: run on
 * the blocks in place, its output blocked the same way.  1 if done, 0 if
 * it does not apply, -1 on error. */
int lw_blocked_elementwise(struct lw *l, const struct ir_node *n, uint32_t codelet,
			   uint32_t op, const uint32_t *up, const int *ins, int nops);

/* The node reading value v, if exactly one live node reads it, once;
 * else -1. */
int lw_only_reader(const struct ir_graph *g, int v);
/*
 * The float32 ones [n], a constant on `tile`: a K split's or an
 * input-channel split's Kp partials (and bias) are summed as the product
 * ones[1 x Kp] x partials[Kp x count], so the matmul kernel adds whole
 * float32 rows at vector speed (a REDUCE adds each element alone, in
 * double) and writes a float16 result itself (no CAST after it).
 */
int lw_ones_on(struct lw *l, uint32_t tile, uint64_t n, struct ipu_slice *out);

/* lower_fp8.c: layers marked by ir_pass_fp8. */
int lw_fp8_is_layer(const struct ir_node *n);
/* The per-output-channel scales of fp8 layer n, or NULL (one scale). */
const int64_t *lw_fp8_channel_scales(const struct ir_node *n, size_t *count);
/* n's channel scales c0..c0+count as a frozen I8 tensor on tile. */
int lw_fp8_channel_piece(struct lw *l, const struct ir_node *n, int64_t c0,
			 int64_t count, uint32_t tile, struct ipu_slice *out);
/* 1 (and its dtype, scale) if v is the fp8 weight of l->node. */
int lw_fp8_weight(const struct lw *l, int v, uint32_t *dt, int *scale);
/* Rows r0..r0+nr of columns c0..c0+nc (leading dimension ld, from element
 * base) of the fp8 weight v, encoded into a frozen tensor on tile. */
int lw_fp8_const_piece(struct lw *l, int v, uint64_t base, int64_t ld, int64_t r0,
		       int64_t nr, int64_t c0, int64_t nc, uint32_t tile,
		       struct ipu_slice *out);
/* Under --precision fp8: replaces the activation operand k of n (on tile)
 * by its fp8 conversion, made by a CAST_FP8 in *cs (created on first use);
 * *scale is its scale (0 when nothing is converted). */
int lw_fp8_input(struct lw *l, const struct ir_node *n, int k, struct ipu_slice *op,
		 uint32_t tile, uint32_t *cs, int *scale);

/* lower_copy_gather.c: the strided copy out[...] = in[off + sum idx_k *
 * st_k] of node n (output dims `shape`, leading 1s dropped) in blocks of
 * output rows that gather only the input runs they need. */
int lw_strided_gather(struct lw *l, const struct ir_node *n, int rank,
		      const int64_t *shape, int64_t off, const int64_t *st);

/* lower_custom.c: a custom operator's node (compiler/custom/), split over
 * tiles as its plugin says; 1 if lowered or -1. */
int lw_custom(struct lw *l, const struct ir_node *n);

/* The lowering's hooks of one operator (its line in ops/ops.def). */
struct lw_op_hooks {
	/* prepare.c: the first rewrite, once per node; decompose
	 * (prepare_decompose.c): rewrites into device ops, run on every node
	 * before and after the first re-inference.  Both keep the node's
	 * outputs, may insert nodes before it (moving *pi to it), and return
	 * 0 (also when nothing applies) or -1. */
	int (*prepare)(struct ir_graph *g, int *pi, struct ir_error *e);
	int (*decompose)(struct ir_graph *g, int *pi, struct ir_error *e);
	/* lower_*.c: 1 if lowered, 0 if this family does not handle the
	 * node after all, -1 on error (message naming the node). */
	int (*lower)(struct lw *l, const struct ir_node *n);
};

/* lower_registry.c: the hooks of n's operator (by its id), or NULL for a
 * custom or unknown one. */
const struct lw_op_hooks *lw_node_hooks(const struct ir_node *n);

/* The hook functions named in ops/ops.def.  The no_* names mark an absent
 * hook; they are declared here only so that the table can name them. */
#define OP(name, lo, hi, fl, inf, ev, up, prep, dec, low) \
	int prep(struct ir_graph *, int *, struct ir_error *); \
	int dec(struct ir_graph *, int *, struct ir_error *); \
	int low(struct lw *, const struct ir_node *);
#include "ops/ops.def"
#undef OP

/* lower_gather_const.c: Gather of run-time data at constant indices, as
 * exchange copies into an output spread over tiles (outer x len x inner
 * data along the gathered axis). */
int lw_gather_const(struct lw *l, const struct ir_node *n, int64_t outer, int64_t len, int64_t inner);

/* lower_gather_split.c: a Gather at run-time indices (data [outer x len
 * x inner]) too large for one tile, in blocks of outer rows, indices and
 * columns over tiles, each reading the [len x columns] data its block
 * covers. */
int lw_gather_split(struct lw *l, const struct ir_node *n, int64_t outer, int64_t len,
		    int64_t inner, int64_t ni);

/* prepare.c: rewrites the IR into what the lowering handles (the prepare
 * and decompose hooks) and refolds constants (fold_limit as
 * ir_infer_opts). */
int ipu_lower_prepare(struct ir_graph *g, int64_t fold_limit, struct ir_error *e);
/* lower_util.c, for the rewrites: a constant filled with v (shape all 1s
 * of `rank`), and a node inserted before *pos (advancing it) returning its
 * new output value. */
int lp_const_scalar(struct ir_graph *g, const char *base, int dt, double v,
		    int rank, struct ir_error *e);
int lp_add_node(struct ir_graph *g, int *pos, const char *name, const char *op,
		const int *in, int nin, struct ir_error *e);
/* lower_tokens.c: a decoder with state, `logits` and `next_token` outputs
 * also gets program LW_TOKENS_PROGRAM (IPUEF_PROGRAM_TOKENS): Main's
 * steps without the logits' stream, for callers that want only tokens.
 * begin: body is a new sequence (the inputs, ops and state updates go
 * there) when the graph qualifies, else IPU_GRAPH_INVALID; output: a
 * streamed output's copy, held back; end: Main = body + every copy, the
 * tokens program = body + every copy but the logits', and the anchors
 * from first_anchor on (not the logits) marked as its too. */
#define LW_TOKENS_PROGRAM 3
struct lw_tokens {
	struct ipu_graph *gb;
	ipu_step main, body;
	ipu_step *sc;
	int *is_logits;
	uint32_t n, cap, first_anchor;
};
int lw_tokens_begin(struct lw_tokens *k, struct ipu_graph *gb, const struct ir_graph *g,
		    const int *in_of_out, ipu_step main, uint32_t first_anchor, struct ir_error *e);
int lw_tokens_output(struct lw_tokens *k, const char *name, ipu_step sc, struct ir_error *e);
int lw_tokens_end(struct lw_tokens *k, struct ipu_lower_anchors *as, ipu_step *tokens);
void lw_tokens_free(struct lw_tokens *k);
/* 1 if an anchor belongs to the tokens program. */
int lw_tokens_present(const struct ipuef_anchor *a, uint32_t n);

/* prepare_argmax.c: every ArgMax/ArgMin whose row is longer than t's tile
 * can reduce comfortably rewritten into per-chunk partials (spread over
 * tiles) and a reduction of the partials, first index on ties as ONNX;
 * shapes re-inferred (fold_limit as ir_infer_opts). */
int lw_split_wide_argmax(struct ir_graph *g, const struct ipu_target *t, int64_t fold_limit,
			 struct ir_error *e);
/* prepare_gather.c: every Gather at run-time indices along an axis
 * longer than a tile's op budget holds rewritten into Gathers of chunks
 * of the axis at clamped indices and a Where per chunk choosing the one
 * each index falls in; shapes re-inferred (fold_limit as ir_infer_opts). */
int lw_split_long_gather(struct ir_graph *g, const struct ipu_target *t, int64_t fold_limit,
			 struct ir_error *e);
/* prepare_rows.c: every ReduceSum/Mean/Max/Min over trailing axes,
 * Softmax, LogSoftmax, LayerNormalization, InstanceNormalization, CumSum
 * and TopK (along their last axis) whose one row (an instance norm's
 * image of C rows) the row lowering could not place on a tile rewritten
 * into two-stage chunked reductions and elementwise ops; shapes
 * re-inferred. */
int lw_split_long_rows(struct ir_graph *g, const struct ipu_target *t, int64_t fold_limit,
		       struct ir_error *e);
/* prepare_conv3d.c: a rank-5 Conv as 2-D convolutions over the depth
 * taps (its decompose hook's share; pooling has its own, lp_dec_pool3d). */
int lp_dec_conv3d(struct ir_graph *g, int *pi, struct ir_error *e);
/* prepare_pad.c: every Pad whose one padded row (its dims from the first
 * padded one on) the Pad lowering could not place on a tile rewritten
 * axis by axis into Slice, Gather and Concat; shapes re-inferred. */
int lw_split_wide_pad(struct ir_graph *g, const struct ipu_target *t, int64_t fold_limit,
		      struct ir_error *e);
/* prepare_decompose.c: the node's decompose hook, if it has one. */
int lp_decompose(struct ir_graph *g, int *pi, struct ir_error *e);

/* lower_debug.c: the .ipuef debug blob's payload for the compiled builder
 * gb (malloc'd): each compute set's and exchange's model node. */
int lw_debug_blob(const struct ipu_graph *gb, const struct ipu_graph_stats *st, void **out,
		  size_t *len, struct ir_error *e);

/* lower_prefill.c: a decoder's prefill graph, prepared as the decode
 * step is (its next_token added, logits not streamed), its anchors
 * prefixed; its caches must be states of the decode step (same name,
 * dtype and shape): lw_prefill_state gives the state's tensor. */
#define LW_PREFILL_PREFIX IPUEF_PREFILL_PREFIX
int lw_prefill_prepare(const struct ir_graph *g, int n, const struct ipu_target *t,
		       struct ir_graph **out, struct ir_error *e);
int lw_prefill_state(const struct ipu_lower_states *ss, const struct ir_value *v, ipu_tensor *t,
		     struct ir_error *e);

/* lower_state.c: device-resident state.  in_of_out[j] (one per graph
 * output) receives the input index whose next value output j is, or -1. */
int lw_state_find(const struct ir_graph *g, const struct ipu_target *t, int *in_of_out,
		  struct ir_error *e);
/* A decoder with state and a `logits` output also gets the greedy next
 * token, computed on the device: output LW_NEXT_TOKEN = ArgMax(logits,
 * last axis) (ids in int64, one dim fewer). */
#define LW_NEXT_TOKEN "next_token"
int lw_state_token(struct ir_graph *g, const struct ipu_target *t, struct ir_error *e);

/* lower_sample.c: sampling on the device (IPUEF_PROGRAM_SAMPLE).
 * candidates: a decoder with `logits` and LW_NEXT_TOKEN outputs gets a
 * TopK of min(IPU_SAMPLE_MAX_K, vocab) of its logits as two more outputs,
 * which the lowering keeps on the device; output: takes those two
 * outputs' slices (1), else 0; end: the sampling program (s->seq) = body +
 * the scalars' streams + SAMPLE + the token's stream, its anchors
 * [first_anchor, end_anchor); mark: gives them (and the graph's input
 * anchors, from graph_first) the program's bit once its index is known. */
#define LW_SAMPLE_VALUES LW_NEXT_TOKEN "/candidates"
#define LW_SAMPLE_IDS LW_NEXT_TOKEN "/candidate_ids"
struct lw_sample {
	struct ipu_slice *sl[2];
	uint32_t nsl[2], dtype[2];
	uint64_t count, k;
	int rank;
	int64_t dims[IR_MAX_RANK];
	ipu_step seq;
	uint32_t graph_first, first_anchor, end_anchor;
};
int lw_sample_candidates(struct ir_graph *g, struct ir_error *e);
int lw_sample_output(struct lw_sample *s, const struct ir_value *v, const struct ipu_slice *sl,
		     uint32_t nsl, struct ir_error *e);
int lw_sample_end(struct lw_sample *s, struct ipu_graph *gb, ipu_step body, const uint64_t *used,
		  uint32_t tiles, struct ipu_lower_anchors *as, struct ir_error *e);
void lw_sample_mark(const struct lw_sample *s, struct ipu_lower_anchors *as, int prog);
void lw_sample_free(struct lw_sample *s);
/* lower.c: an anchor of value v's name, dtype and dims (no batch dim). */
int lw_anchor_add(struct ipu_lower_anchors *as, const struct ir_value *v, uint32_t dir,
		  uint32_t stream, struct ir_error *e);
int lw_state_add(struct ipu_lower_states *ss, const struct ir_value *v, uint32_t rt_dtype,
		 ipu_tensor tt, uint32_t write_stream, uint32_t read_stream, struct ir_error *e);
/* The state_write and state_read programs (added after Main). */
int lw_state_programs(struct ipu_graph *gb, const struct ipu_lower_states *ss);
/* After compile: each state's tile regions, in element order. */
int lw_state_regions(struct ipu_graph *gb, struct ipu_lower_states *ss, struct ir_error *e);
void lw_states_free(struct ipu_lower_states *ss);

#endif
