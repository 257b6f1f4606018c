/* SPDX-License-Identifier: MIT */
/*
 * serve.h - the parts of ipu-serve and how they meet.
 *
 *   repository.c   the model repository (Triton layout), versions, load and
 *                  unload; hands out counted references to loaded versions
 *   model_config.c config.yaml (Triton's field names) read with libyaml
 *   config_pbtxt.c config.pbtxt (Triton's model_config.proto in text
 *                  format) through pbtxt.cc (libprotobuf) and protoc-c
 *   config_io.c    a config's declared inputs and outputs against the model
 *   repo_poll.c    --model-control-mode=poll: the repository watched
 *   scheduler.c    one queue per model version, one worker per instance
 *                  (a ModelRunner on its own device), dynamic batching
 *   batch.c        merging requests along the batch dimension and splitting
 *                  the results back
 *   pack.c         packing variable-length sequences into the rows of one
 *                  device batch along the sequence axis, and back (pack.h)
 *   generate.c     the generate extension: a decoder's request, its
 *                  tokens, the answer and its stream events
 *   gen_batch.c    continuous batching: an instance's generation loop over
 *                  the decoder's cache slots (ipurt_gen_slots_*)
 *   infer_request.c / infer_response.c  the v2 protocol's infer bodies
 *                  (JSON and the binary tensor data extension) via jansson
 *   infer_core.c   the request path HTTP and gRPC share: decoded tensors
 *                  checked and filled, queued, waited for, errors mapped
 *   http.c         the endpoints over libmicrohttpd
 *   grpc_server.c / grpc_service.c  KServe v2's GRPCInferenceService over
 *                  gRPC's C core, messages by protobuf-c (server/grpc/)
 *   metrics.c      Prometheus' text format
 *   stats.c        the statistics extension's counters (stats.h), and
 *   stats_json.c   its answer
 *   shm.c          the system shared-memory extension (shm.h)
 *   main.c         options, start, SIGTERM drain
 */
#ifndef IPU_SERVE_H
#define IPU_SERVE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "ipu/runtime.h"
#include "stats.h"

#define SRV_MAX_IO 64
#define SRV_ERR 512
#define SRV_MAX_VERSIONS 64
#define SRV_MAX_PREFERRED 16

/* ------------------------------------------------------------------ */
/* config.yaml and config.pbtxt                                         */
/* ------------------------------------------------------------------ */

enum srv_version_policy {
	SRV_POLICY_LATEST = 0,
	SRV_POLICY_ALL = 1,
	SRV_POLICY_SPECIFIC = 2,
};

/* An input or output a config.pbtxt declares (checked against the model). */
struct srv_tensor_decl {
	char name[256];
	uint32_t dtype;			/* enum ipurt_dtype */
	uint32_t rank;
	int64_t dims[IPUEF_MAX_RANK];	/* without the batch dim when batched; -1: any */
};

#define SRV_PACK_MAX_NAMES 8
#define SRV_PACK_NAME 128

enum srv_pack_mask {
	SRV_PACK_MASK_SEGMENT_IDS = 0,	/* [B, T]: 1, 2, ... per sequence, 0 padding */
	SRV_PACK_MASK_ADDITIVE = 1,	/* [B, T, T] or [B, 1, T, T]: 0 or -10000 */
};

/*
 * config.yaml's packing: block (pack.h): variable-length requests packed
 * along the sequence axis, after PopRT's pack_args.
 */
struct srv_pack_config {
	int enabled;
	char seq_inputs[SRV_PACK_MAX_NAMES][SRV_PACK_NAME];
	uint32_t num_seq_inputs;
	char mask_input[SRV_PACK_NAME];
	enum srv_pack_mask mask_kind;
	char position_input[SRV_PACK_NAME];	/* "": the model takes none */
	char segment_outputs[SRV_PACK_MAX_NAMES][SRV_PACK_NAME];
	uint32_t num_segment_outputs;
	uint64_t max_sequence_length;	/* the model's sequence axis (dimension 1) */
	uint64_t max_sequences_per_row;
};

struct srv_model_config {
	int has_max_batch_size;
	int64_t max_batch_size;		/* Triton: 0 = no batching */
	int dynamic_batching;		/* the block is present */
	uint64_t preferred[SRV_MAX_PREFERRED];
	uint32_t num_preferred;
	uint64_t max_queue_delay_us;
	int has_max_queue_size;
	uint64_t max_queue_size;
	uint32_t instance_count;	/* sum over instance_group */
	enum srv_version_policy policy;
	uint32_t latest_n;
	int64_t versions[SRV_MAX_VERSIONS];
	uint32_t num_versions;
	/* config.pbtxt only */
	uint32_t num_inputs, num_outputs;
	struct srv_tensor_decl inputs[SRV_MAX_IO], outputs[SRV_MAX_IO];
	char model_filename[256];	/* default_model_filename; "": model.ipuef or model.onnx */
	int has_timeout;
	uint64_t timeout_ns;		/* parameters timeout_ns: the execution timeout */
	int synchronous;		/* parameters synchronous_execution: -1 unset, 0, 1 */
	/* config.yaml only */
	struct srv_pack_config packing;
};

void srv_model_config_init(struct srv_model_config *c);
/*
 * Read <dir>/config.pbtxt or <dir>/config.yaml, whichever exists (neither:
 * defaults, returns 0; both: refused).  `model` is the folder's name; a
 * `name` field must equal it.
 */
int srv_model_config_read(const char *dir, const char *model, struct srv_model_config *c,
			  char *err, size_t errlen);
/* Same from a YAML text (for the tests). */
int srv_model_config_parse(const char *text, size_t len, const char *model,
			   struct srv_model_config *c, char *err, size_t errlen);
/*
 * Same from a config.pbtxt text (Triton's ModelConfig in protobuf text
 * format, read by libprotobuf): a field Triton does not define, a value of
 * the wrong type or bad syntax is refused with the library's message and
 * place; a field Triton defines that ipu-serve does not act on is refused
 * by its path (Documentation/serve/repository.md lists both).
 */
int srv_model_config_parse_pbtxt(const char *text, size_t len, const char *model,
				 struct srv_model_config *c, char *err, size_t errlen);
/*
 * A loaded model against the inputs and outputs its config declares
 * (names, datatypes, dims with -1 for any size; every model input must be
 * declared when any is).  0 or -1 with err.
 */
struct srv_model;
int srv_model_config_check_io(const struct srv_model_config *c, struct srv_model *m, char *err,
			      size_t errlen);

/* ------------------------------------------------------------------ */
/* Protocol data types                                                  */
/* ------------------------------------------------------------------ */

/* "FP32", "INT64", ... for an enum ipurt_dtype, or NULL. */
const char *srv_dtype_to_v2(uint32_t dt);
/* IPURT_DT_INVALID if the runtime has no such type. */
uint32_t srv_dtype_from_v2(const char *name);

/* ------------------------------------------------------------------ */
/* Requests                                                             */
/* ------------------------------------------------------------------ */

struct srv_model;
struct srv_gen;
struct srv_shm;
struct srv_shm_region;

/* One infer (or generate) request from parse to response. */
struct srv_request {
	char *id;			/* the client's "id", or NULL */
	struct srv_gen *gen;		/* a generation (generate.c), NULL for infer */
	int subgraph;			/* fused models: K of graphK/..., else -1 */
	uint64_t rows;			/* along the batch dim; 0: unbatched model */
	/*
	 * Packing (pack.h): the tokens of the request's one sequence (0: not
	 * packed), and where the packer put it: row, first token, segment id.
	 */
	uint64_t seq_len;
	uint32_t pack_row, pack_seg;
	uint64_t pack_off;
	uint32_t nin, nout;		/* all outputs of the subgraph are computed */
	struct ipurt_tensor in[SRV_MAX_IO], out[SRV_MAX_IO];
	uint32_t in_bdim[SRV_MAX_IO], out_bdim[SRV_MAX_IO];
	void *in_owned[SRV_MAX_IO];	/* JSON-decoded inputs; binary ones point into the body */
	/* what the client asked back: out index, binary or JSON */
	uint32_t nreq;
	uint32_t req_out[SRV_MAX_IO];
	int req_binary[SRV_MAX_IO];
	int binary_default;
	/*
	 * The shared-memory extension: the registry tensors may name (set
	 * before parsing; NULL: the extension is off), and the region each
	 * requested output is written into (NULL: in the answer), held until
	 * the request is freed.
	 */
	struct srv_shm *shm;
	struct srv_shm_region *req_shm[SRV_MAX_IO];
	uint64_t req_shm_offset[SRV_MAX_IO], req_shm_size[SRV_MAX_IO];

	/* scheduling */
	struct srv_request *next;
	uint64_t t_enqueue_ns, t_start_ns, t_done_ns;
	uint64_t t_infer_ns, t_infer_end_ns;	/* the device's run within start..done */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int done;
	int status;			/* 0 or a negative ipurt code */
	char err[SRV_ERR];
};

/* Monotonic time in nanoseconds. */
uint64_t srv_now_ns(void);

struct srv_request *srv_request_new(void);
void srv_request_free(struct srv_request *r);

/*
 * Fill req from an infer body: json_len bytes of JSON, then the binary
 * tensor data (total len).  Validates names, datatypes and shapes against
 * the model and allocates the outputs.  The JSON's parse is counted
 * against budget (NULL: unbounded; json_budget.h), and a float that
 * overflows its declared FP32 or FP16 type is refused like an out-of-range
 * integer.  Tensors may name regions of req->shm instead of carrying
 * data (shm.h): inputs are read from them here, outputs written by
 * srv_response_build.  On failure returns an HTTP status (400, 413 or 503
 * from the budget ...) with the message in err.
 */
struct srv_json_budget;
int srv_request_parse(struct srv_model *m, const char *body, size_t len, size_t json_len,
		      struct srv_json_budget *budget, struct srv_request *req, char *err, size_t errlen);

/*
 * The response body of a finished request: JSON only, or the JSON header
 * followed by binary outputs (*json_len < *len then); outputs asked into
 * shared memory are written there and carry only their parameters.
 * Returns 0 or an HTTP status with err.  *out is malloc'd.
 */
int srv_response_build(struct srv_model *m, const struct srv_request *req, char **out,
		       size_t *len, size_t *json_len, char *err, size_t errlen);

/* ------------------------------------------------------------------ */
/* Generation (generate.c)                                              */
/* ------------------------------------------------------------------ */

#define SRV_GEN_MAX_STOP 64

/* What the generate endpoints need to know of a decoder. */
struct srv_gen_model {
	uint64_t positions;		/* the cache's (dim -2 of its first state) */
	uint64_t vocab;			/* last dim of 'logits'; 0 if it has none */
	long long id_max;		/* the largest token id input_ids' type holds */
};

/* One generation: the request, then the tokens as they are made. */
struct srv_gen {
	int64_t *prompt;
	uint32_t nprompt;
	int64_t stop[SRV_GEN_MAX_STOP];
	uint32_t num_stop;
	struct ipurt_generate_opts opts;
	/* under the request's lock: the tokens so far, and the client gone */
	int64_t *tokens;		/* opts.max_new_tokens of room */
	uint32_t ntokens;
	int cancel;
	struct ipurt_generate_stats st;	/* final once the request is done */
};

/* 0 if m can generate (g filled), else 400 with the reason. */
int srv_gen_model(struct srv_model *m, struct srv_gen_model *g, char *err, size_t errlen);
/*
 * Fill req->gen from a generate body (JSON within the budget b).  Returns
 * 0 or an HTTP status (400 bad input, not a decoder, prompt or max_tokens
 * past the cache; 413/503 from the budget) with err.  req->gen may be set
 * on failure too: srv_request_free frees it.
 */
struct srv_json_budget;
int srv_gen_parse(struct srv_model *m, const char *body, size_t len, struct srv_json_budget *b,
		  struct srv_request *req, char *err, size_t errlen);
void srv_gen_free(struct srv_gen *g);
/*
 * The generation loop's side (gen_batch.c): new token index made (kept
 * and handed to a waiting stream; returns non-zero once the client is
 * gone), the sequence ended (enum ipurt_gen_stop), the client gone.
 */
int srv_gen_token(struct srv_request *req, uint32_t index, int64_t token);
void srv_gen_end(struct srv_request *req, uint32_t stopped);
int srv_gen_cancelled(struct srv_request *req);
/* Stop it at its next token (the client went away). */
void srv_gen_cancel(struct srv_request *req);
/* The /generate answer of a finished generation (malloc'd JSON). */
char *srv_gen_response(const struct srv_model *m, const struct srv_request *req, size_t *len);
/*
 * The /generate_stream events ("data: {...}\n\n") into buf of cap bytes:
 * one token, the final one, an error.  Each returns its length (0: did
 * not fit or no memory).
 */
size_t srv_gen_event_token(const struct srv_model *m, const struct srv_request *req,
			   uint32_t index, int64_t token, char *buf, size_t cap);
size_t srv_gen_event_final(const struct srv_model *m, const struct srv_request *req, char *buf,
			   size_t cap);
size_t srv_gen_event_error(const char *msg, char *buf, size_t cap);

/* ------------------------------------------------------------------ */
/* Models and their schedulers                                          */
/* ------------------------------------------------------------------ */

#define SRV_HIST_BUCKETS 14

struct srv_metrics {
	uint64_t success, failure;	/* requests */
	uint64_t inferences;		/* rows (or requests of an unbatched model) */
	uint64_t executions;		/* runs of the runner (batches) */
	uint64_t queue_ns, compute_ns, request_ns;
	uint64_t modelled_cycles;
	uint64_t hist[SRV_HIST_BUCKETS + 1];	/* request duration, last = +Inf */
	double hist_sum_s;
	uint64_t batch_rows_max;	/* the largest batch formed */
	uint64_t gen_tokens;		/* tokens made by generations */
	uint64_t gen_steps;		/* device steps of the generation loops */
};

extern const double srv_hist_bounds[SRV_HIST_BUCKETS];

struct srv_instance;

/* One loaded version of a model. */
struct srv_model {
	char *name;
	int64_t version;
	char *path;
	struct ipuef_file *file;
	struct srv_model_config cfg;
	int fused;
	uint32_t batch_dim;		/* IPURT_NO_BATCHING_DIM: not batched */
	uint64_t compiled_batch;
	uint64_t max_batch;		/* effective max_batch_size (0: none) */
	uint64_t max_queue;
	/* every batched anchor has the same rows: requests can be merged */
	int mergeable;

	uint32_t num_instances;
	struct srv_instance *inst;

	pthread_mutex_t lock;		/* queue, metrics, refs */
	pthread_cond_t cond;
	struct srv_request *head, *tail;
	uint32_t queued;
	uint32_t executing;
	int stopping;
	int forming;			/* a worker is gathering a batch */
	uint32_t forming_n;		/* requests in that batch so far */
	int refs;
	struct srv_metrics met;
	struct srv_stats stats;		/* the statistics extension's */
	int log_verbose;
};

struct srv_load_opts {
	const char *device;		/* NULL: in-process, sized to the model */
	struct ipurt_device_manager *dm;/* shared when a device list is given */
	const char *custom_ops;		/* plugins of the in-process devices
					 * (':'-joined paths), or NULL */
	uint64_t exec_timeout_ns;
	uint64_t default_max_queue;
	int log_verbose;
};

/* Open a version and start its instances. */
int srv_model_create(const char *name, int64_t version, const char *path,
		     const struct srv_model_config *cfg, const struct srv_load_opts *o,
		     struct srv_model **out, char *err, size_t errlen);
/* The same with the .ipuef already open (taken over, closed on failure
 * too); path names it in messages. */
int srv_model_create_from(const char *name, int64_t version, const char *path,
			  struct ipuef_file *file, const struct srv_model_config *cfg,
			  const struct srv_load_opts *o, struct srv_model **out, char *err,
			  size_t errlen);
/* onnx_load.c: a version's model.onnx compiled in memory with ipu-compile's
 * defaults (ipu_compile(), ipu/compiler.h) and opened; the message names the
 * node the compiler refused. */
int srv_compile_onnx(const char *path, struct ipuef_file **out, char *err, size_t errlen);
/* Stop its workers (after the queue drained) and free it. */
void srv_model_destroy(struct srv_model *m);
/* A runner of the model, for metadata (instance 0). */
struct ipurt_runner *srv_model_runner(struct srv_model *m);

/*
 * Queue a parsed request; 503 if the queue is full, 0 when queued.
 * srv_model_wait blocks until the request is done.
 */
int srv_model_submit(struct srv_model *m, struct srv_request *req, char *err, size_t errlen);
void srv_model_wait(struct srv_model *m, struct srv_request *req);
/*
 * Take a request that has not started out of the queue and complete it as
 * cancelled (IPURT_E_CANCELLED); a running one is left to finish.
 */
void srv_model_withdraw(struct srv_model *m, struct srv_request *req);
/*
 * For the generation loop (gen_batch.c).  srv_model_take_gen, with
 * m->lock held: the request at the head of the queue, taken out, if it is
 * a generation, else NULL (the queue stays in arrival order).
 * srv_model_gen_done, without the lock: a generation started at t0 is
 * over (accounted as one execution, then completed with rc and err).
 * srv_gen_batch, called and returning with m->lock held: first and the
 * generations queued behind it run on r, instance index, in its cache
 * slots, until no slot holds a sequence.
 */
struct srv_request *srv_model_take_gen(struct srv_model *m);
void srv_model_gen_done(struct srv_model *m, struct srv_request *q, uint64_t t0, int rc,
			const char *err);
void srv_gen_batch(struct srv_model *m, struct ipurt_runner *r, uint32_t index,
		   struct srv_request *first);
/* Copy of the metrics and gauges under the lock. */
void srv_model_metrics(struct srv_model *m, struct srv_metrics *out, uint32_t *queued,
		       uint32_t *executing);
/* The same with the statistics (free with srv_stats_fini); -1 out of memory. */
int srv_model_stats(struct srv_model *m, struct srv_metrics *out, struct srv_stats *st,
		    uint32_t *queued, uint32_t *executing);
/*
 * A request for m refused before it was queued (an HTTP status: 503 a full
 * queue or an unloading model, else invalid), t0 when it arrived: counted
 * as a failure of the statistics extension.
 */
void srv_model_refused(struct srv_model *m, int status, uint64_t t0);

/* ------------------------------------------------------------------ */
/* Repository                                                           */
/* ------------------------------------------------------------------ */

struct srv_repo;

enum srv_state {
	SRV_UNAVAILABLE = 0,
	SRV_LOADING = 1,
	SRV_READY = 2,
	SRV_UNLOADING = 3,
};
const char *srv_state_name(enum srv_state s);

int srv_repo_create(const char *dir, const struct srv_load_opts *o, struct srv_repo **out,
		    char *err, size_t errlen);
void srv_repo_destroy(struct srv_repo *r);
/* Load (or reload) a model's versions; 0 or an HTTP status with err. */
int srv_repo_load(struct srv_repo *r, const char *name, char *err, size_t errlen);
int srv_repo_unload(struct srv_repo *r, const char *name, char *err, size_t errlen);
/* Every model folder of the repository. */
int srv_repo_load_all(struct srv_repo *r, char *err, size_t errlen);
/*
 * A counted reference to a loaded version (version < 0: the highest
 * loaded), or NULL with a 404 message.  Release with srv_repo_put.
 */
struct srv_model *srv_repo_get(struct srv_repo *r, const char *name, int64_t version,
			       char *err, size_t errlen);
void srv_repo_put(struct srv_repo *r, struct srv_model *m);
/* The loaded versions of a model, ascending (references; put each). */
uint32_t srv_repo_versions(struct srv_repo *r, const char *name, struct srv_model **out,
			   uint32_t max);

/* The index (every folder, with state and reason) as a JSON array text. */
char *srv_repo_index_json(struct srv_repo *r, int ready_only);
/* Every loaded version, for the metrics page (references; put each). */
uint32_t srv_repo_all(struct srv_repo *r, struct srv_model **out, uint32_t max);

/* ------------------------------------------------------------------ */
/* Metrics                                                              */
/* ------------------------------------------------------------------ */

/* The Prometheus text page (malloc'd) of every loaded version. */
char *srv_metrics_page(struct srv_repo *r, size_t *len);

#endif /* IPU_SERVE_H */
