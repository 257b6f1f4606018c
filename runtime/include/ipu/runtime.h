/* SPDX-License-Identifier: MIT */
/*
 * ipu/runtime.h - the Model Runtime (libipurt): load an .ipuef model onto
 * an IPU device and run inference requests.
 *
 * The components follow the Model Runtime's split (DeviceManager, Session, Executable, QueueManager, ModelRunner):
 *
 *   DeviceManager  finds a device that satisfies the model (tiles, memory,
 *                  IPU version) among every backend, and waits for one if
 *                  all are busy
 *   Executable     uploads the executable and runs/stops its programs
 *   Session        binds TensorData to the Load program's streams (with a
 *                  predicate to exclude tensors the user overrides), runs
 *                  Load once, then serves requests; owns a QueueManager
 *   QueueManager   one SPSC RingBuffer per anchor holding pointers to the
 *                  user's memory (no copies), moved into the device's
 *                  stream FIFOs in order as each request is enqueued, so
 *                  the host prepares request k+1 while the device runs
 *                  request k
 *   ModelRunner    the one-call API: execute / execute_async + wait, with
 *                  timeouts, I/O validation, dynamic batch sizing and
 *                  conditional execution of fused models
 *
 * Errors: negative codes of ipu/error.h (IPURT_E_*, or the device's and the
 * .ipuef reader's, which pass through; ipu_err_name() names any of them)
 * and a one-line message in `err`.
 * No global state; a ModelRunner may be used by many threads at once.
 */
#ifndef IPU_RUNTIME_H
#define IPU_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#include "ipu/dtype.h"
#include "ipu/group.h"
#include "ipu/ipu.h"
#include "ipu/ipuef.h"


/* ------------------------------------------------------------------ */
/* DeviceManager                                                        */
/* ------------------------------------------------------------------ */

struct ipurt_device_manager;

enum ipurt_wait_policy {
	IPURT_WAIT_NONE = 0,	/* fail with IPURT_E_BUSY at once */
	IPURT_WAIT_TIMEOUT = 1,	/* wait up to wait_timeout_ns */
	IPURT_WAIT_FOREVER = 2,
};

/* What a model needs from a device. */
struct ipurt_device_req {
	uint32_t num_tiles;
	uint32_t tile_mem;
	const char *ipu_version;	/* "ipu2", "ipu21" or NULL for any */
};

/*
 * A manager of the devices listed in `specs` (comma-separated libipu
 * specs, e.g. "model,model:tiles=64") plus every /dev/accel/accelN present.
 * specs NULL or "" means "model" (one in-process device of the default
 * size).  Devices are opened lazily.
 */
int ipurt_dm_create(const char *specs, struct ipurt_device_manager **out, char *err,
		    size_t errlen);
void ipurt_dm_destroy(struct ipurt_device_manager *dm);
uint32_t ipurt_dm_count(const struct ipurt_device_manager *dm);
/* Spec of device i (as listed). */
const char *ipurt_dm_spec(const struct ipurt_device_manager *dm, uint32_t i);
/*
 * Take a free device that satisfies req (attached, exclusively ours until
 * ipurt_dm_release).  IPURT_E_NO_DEVICE if none could ever satisfy it
 * (the message lists what each device lacks), IPURT_E_BUSY / TIMEOUT if
 * all suitable ones stay busy under the wait policy.
 */
int ipurt_dm_acquire(struct ipurt_device_manager *dm, const struct ipurt_device_req *req,
		     enum ipurt_wait_policy policy, int64_t wait_timeout_ns,
		     struct ipu_device **dev, char *err, size_t errlen);
void ipurt_dm_release(struct ipurt_device_manager *dm, struct ipu_device *dev);
/*
 * Take n devices at once, all or none (a caller holding some while it waits
 * for the rest could deadlock with another doing the same).  only NULL:
 * any n free devices that satisfy req, in the manager's order; only a list
 * of specs ("/dev/accel/accel0,/dev/accel/accel1"): exactly the devices it names (n 0
 * means as many as it names).  devs receives n handles, each released
 * with ipurt_dm_release.  Errors as ipurt_dm_acquire, IPURT_E_INVAL if n
 * disagrees with the list.
 */
int ipurt_dm_acquire_n(struct ipurt_device_manager *dm, const struct ipurt_device_req *req,
		       uint32_t n, const char *only, enum ipurt_wait_policy policy,
		       int64_t wait_timeout_ns, struct ipu_device **devs, char *err,
		       size_t errlen);

/* ------------------------------------------------------------------ */
/* Executable and Session                                               */
/* ------------------------------------------------------------------ */

struct ipurt_executable;

/* Upload the model's executable to dev (verified by the device). */
int ipurt_executable_load(struct ipu_device *dev, const struct ipuef_file *f,
			  struct ipurt_executable **out, char *err, size_t errlen);
void ipurt_executable_free(struct ipurt_executable *x);
/*
 * Upload the same executable again to the same device, e.g. after a
 * device reset unloaded it (runs then fail with IPU_E_NOT_LOADED).
 */
int ipurt_executable_reload(struct ipurt_executable *x, char *err, size_t errlen);
/* Program index by name ("load", "main", "save"), or -1. */
int ipurt_executable_program(const struct ipurt_executable *x, const char *name);
/* Run a program to completion (its streams must be fed by the caller). */
int ipurt_executable_run(struct ipurt_executable *x, uint32_t prog, int64_t timeout_ns,
			 char *err, size_t errlen);
struct ipu_device *ipurt_executable_device(const struct ipurt_executable *x);

/* A tensor handed to the runtime: a view of the caller's memory. */
struct ipurt_tensor {
	const char *name;		/* anchor name */
	uint32_t dtype;			/* enum ipurt_dtype */
	uint32_t rank;
	uint64_t dims[IPUEF_MAX_RANK];
	void *data;			/* C order, stays valid until done */
};

/* Exclude a TensorData tensor from automatic binding (return non-zero). */
typedef int (*ipurt_tensor_predicate)(const char *name, void *ctx);

struct ipurt_session_opts {
	ipurt_tensor_predicate exclude;	/* NULL: bind every TensorData */
	void *exclude_ctx;
	/* user data for excluded (or any) TensorData anchors */
	const struct ipurt_tensor *overrides;
	uint32_t num_overrides;
	int64_t load_timeout_ns;	/* for the Load program; < 0 forever */
};

struct ipurt_session;

/*
 * Upload the executable, bind TensorData (streams of the Load program),
 * run Load once.  The session keeps `f` (the caller keeps it open).
 */
int ipurt_session_create(struct ipu_device *dev, const struct ipuef_file *f,
			 const struct ipurt_session_opts *opts, struct ipurt_session **out,
			 char *err, size_t errlen);
void ipurt_session_destroy(struct ipurt_session *s);
/*
 * Upload the executable again and run Load again with the file's
 * TensorData, as ipurt_session_create did: a device reset unloads the
 * model.  Not for sessions created with overrides (IPURT_E_INVAL: their
 * data belongs to the caller, who creates the session again instead).
 * The caller keeps other users of the device away meanwhile.
 */
int ipurt_session_reload(struct ipurt_session *s, char *err, size_t errlen);
struct ipurt_executable *ipurt_session_executable(struct ipurt_session *s);
const struct ipuef_file *ipurt_session_file(const struct ipurt_session *s);
/*
 * Run a named program once, synchronously, feeding the given tensors to
 * their anchors' streams (e.g. "save" with its output anchors).
 */
int ipurt_session_run_program(struct ipurt_session *s, const char *program,
			      const struct ipurt_tensor *tensors, uint32_t n,
			      int64_t timeout_ns, char *err, size_t errlen);

/*
 * Device-resident state (ipuef.h, struct ipuef_state): tensors such as a
 * key/value cache that stay in tile memory from run to run.  A session
 * initialises them after Load (and after ipurt_session_reload) to their
 * initial values: zeros, or the TensorData blob of the state's name.
 *
 * Reset puts every state back to its initial value; read copies state
 * `name` (exactly its bytes, C order) out; write replaces it.  Each is one
 * or two runs of the state_read / state_write programs, which move every
 * state at once through the device's streams, so the cost grows with the
 * total state, not with the one named.  Call them between requests: a run
 * of Main in flight may see the state before or after.  A model without
 * state resets as a no-op; read and write fail with IPURT_E_NAME for a
 * name the model does not declare, IPURT_E_SHAPE for another size.
 */
int ipurt_session_reset_state(struct ipurt_session *s, char *err, size_t errlen);
int ipurt_session_read_state(struct ipurt_session *s, const char *name, void *dst,
			     uint64_t bytes, char *err, size_t errlen);
int ipurt_session_write_state(struct ipurt_session *s, const char *name, const void *src,
			      uint64_t bytes, char *err, size_t errlen);

/* ------------------------------------------------------------------ */
/* QueueManager                                                         */
/* ------------------------------------------------------------------ */

struct ipurt_queue_manager;

/* Called once per finished run with its status (from the QM's thread). */
typedef void (*ipurt_run_done_fn)(void *ctx, void *run_tag, int status, const char *msg);

/*
 * The session's QueueManager (seed: Session::createQueueManager): one ring
 * of `depth` entries (a power of two) per anchor of the Main program.
 */
int ipurt_session_create_queue_manager(struct ipurt_session *s, uint32_t depth,
				       ipurt_run_done_fn done, void *done_ctx,
				       struct ipurt_queue_manager **out, char *err,
				       size_t errlen);
void ipurt_qm_destroy(struct ipurt_queue_manager *qm);
/*
 * Enqueue one request: for each listed anchor the pointer to its data
 * (exactly the anchor's bytes), then a run of Main tagged `run_tag`.
 * Thread-safe; blocks while the rings are full.  The buffers must stay
 * valid until `done` is called for run_tag.
 */
int ipurt_qm_enqueue(struct ipurt_queue_manager *qm, const uint32_t *anchors,
		     void *const *buffers, uint32_t n, void *run_tag);
/*
 * Recover from a stuck request: abort the device, report every queued and
 * running request as cancelled (IPURT_E_CANCELLED), keep the loaded model.
 * Thread-safe.
 */
void ipurt_qm_recover(struct ipurt_queue_manager *qm);

/* ------------------------------------------------------------------ */
/* ModelRunner                                                          */
/* ------------------------------------------------------------------ */

#define IPURT_NO_BATCHING_DIM 0xffffffffu
#define IPURT_ALL_LISTED 0xffffffffu	/* ipurt_config.num_devices */

/* The life of one request, for profiles (ipurt_config.on_request). */
enum ipurt_request_event {
	IPURT_REQ_QUEUED = 0,	/* accepted by execute / execute_async */
	IPURT_REQ_STARTED = 1,	/* its first device run handed to the device */
	IPURT_REQ_DONE = 2,	/* finished (status: its result) */
};

/*
 * id counts the runner's requests from 0; t_ns is CLOCK_MONOTONIC.  Called
 * from the caller's thread (QUEUED, and the others for a request execute
 * runs there) and the runtime's threads (the others); must not block or
 * call into the runner.
 */
typedef void (*ipurt_request_fn)(void *ctx, uint64_t id, enum ipurt_request_event ev,
				 uint64_t t_ns, int status);

struct ipurt_config {
	/* a request not done after this long fails with IPURT_E_TIMEOUT and
	 * the pipeline is recovered; 0 waits forever */
	uint64_t timeout_ns;
	/* every user input and output anchor must be given, names, dtypes and
	 * shapes are checked (names, dtypes and sizes are always checked) */
	int validate_io_params;
	/* dynamic batch sizing: IPURT_NO_BATCHING_DIM = only
	 * multiples of the compiled batch along the model's batch dim */
	uint32_t batching_dim;
	uint32_t ring_buffer_size;	/* requests in flight, power of two */
	enum ipurt_wait_policy wait_policy;	/* when all devices are busy */
	int64_t wait_timeout_ns;
	/* libipu device spec or a list of them ("model:tiles=16;/dev/accel/accel0");
	 * NULL: an in-process device made to match the model (its tiles,
	 * tile memory and version), then any /dev/accel/accelN */
	const char *device;
	struct ipurt_device_manager *dm;	/* NULL: a private one */
	/* optional observer of every request's life (NULL: none) */
	ipurt_request_fn on_request;
	void *on_request_ctx;
	/*
	 * Replication: load the model on several devices and spread the
	 * device runs over them (the one with the fewest runs outstanding,
	 * ties in turn).  0 or 1: one device; N: any N free devices that
	 * satisfy the model; IPURT_ALL_LISTED: exactly the devices `device`
	 * lists ("/dev/accel/accel0,/dev/accel/accel1", "model,model").  A device whose run
	 * fails (an error, a reset, a timeout, the device gone) is taken out
	 * of rotation and the runs it held are moved to another device, once
	 * each; see Documentation/runtime/model-runtime.md.
	 */
	uint32_t num_devices;
};

/*
 * A device spec (for ipurt_config.device) that runs file f with the
 * custom-operator plugins `paths` (':'-separated paths): each in-process
 * device of `device` gets them (custom-ops=PATH, ipu/custom_ops.h);
 * device NULL or "" gives one in-process device made to match the model
 * (f may be NULL when a device is given).
 * A /dev/accel/accelN device is left as it is: a VM's device loads the plugins
 * its QEMU was started with (-device ipu,custom-ops=PATH).  *out is
 * malloc'd; 0 or IPURT_E_INVAL / IPURT_E_NOMEM with a message.
 */
int ipurt_custom_ops_spec(const char *device, const struct ipuef_file *f, const char *paths,
			  char **out, char *err, size_t errlen);

/* Defaults: timeout 0, validate on, no batching dim, 16 rings, wait none. */
void ipurt_config_init(struct ipurt_config *c);

struct ipurt_runner;
struct ipurt_future;

int ipurt_runner_create(const char *path, const struct ipurt_config *cfg,
			struct ipurt_runner **out, char *err, size_t errlen);
/* Same, from a file already open (kept open by the caller). */
int ipurt_runner_create_from(const struct ipuef_file *f, const struct ipurt_config *cfg,
			     struct ipurt_runner **out, char *err, size_t errlen);
void ipurt_runner_destroy(struct ipurt_runner *r);
const struct ipuef_file *ipurt_runner_file(const struct ipurt_runner *r);
/* The runner's first device (its only one without replication). */
struct ipu_device *ipurt_runner_device(const struct ipurt_runner *r);
/* Devices the model is loaded on, and device i of them. */
uint32_t ipurt_runner_num_devices(const struct ipurt_runner *r);
struct ipu_device *ipurt_runner_device_at(const struct ipurt_runner *r, uint32_t i);
/* A model split over IPUs (ipuef_num_ipus() > 1) runs on a group of
 * in-process devices (ipu/group.h: link counters, the modelled clock);
 * the runner's devices are its IPUs.  NULL for a one-IPU model. */
struct ipu_group *ipurt_runner_group(const struct ipurt_runner *r);
/*
 * Device i's share of the work: device runs it finished successfully,
 * and whether it is still in rotation (1) or was taken out (0, with the
 * reason in why).  -1 if i is out of range.
 */
int ipurt_runner_device_status(struct ipurt_runner *r, uint32_t i, uint64_t *runs_ok,
			       char *why, size_t whylen);

/*
 * Register caller memory with the runner's devices (ipu_register_memory):
 * tensors whose data lie wholly inside it skip the per-request pinning on
 * a kernel device (/dev/accel/accelN); on the in-process device it only records
 * the range.  For pools of buffers reused across requests (a server's or
 * a binding's); *id is for ipurt_runner_unregister_memory.  Returns 0, or
 * IPURT_E_INVAL (overlap, size, device without registered buffers),
 * IPURT_E_BUSY (no free slot), IPURT_E_NOMEM, with a message in err.
 */
int ipurt_runner_register_memory(struct ipurt_runner *r, void *addr, size_t len,
				 uint32_t *id, char *err, size_t errlen);
int ipurt_runner_unregister_memory(struct ipurt_runner *r, uint32_t id);

/*
 * The subgraph K of a fused model's anchor name "graphK/NAME", or -1 when
 * the name has no such prefix.
 */
int ipurt_anchor_subgraph(const char *name);

/*
 * What a request to the main program passes: one tensor per user anchor of
 * subgraph `subgraph` (-1: every anchor), inputs first, then outputs, with
 * name, dtype and shape filled and data NULL.  `rows` is the request's
 * size along the batch dimension of its first batched input (0: the
 * compiled size); every batched anchor is scaled with it, as execute()
 * expects (batching_dim, or multiples of the compiled batch).  batch_dims
 * (may be NULL) receives each tensor's batch dimension, or
 * IPUEF_NO_BATCH_DIM.  Returns the number of tensors (at most max; *nin of
 * them inputs) or a negative code.
 */
int ipurt_runner_io(const struct ipurt_runner *r, int subgraph, uint64_t rows,
		    struct ipurt_tensor *t, uint32_t *batch_dims, uint32_t max, uint32_t *nin);

/*
 * Run one request to completion.  A request of one device run, on a runner
 * of one device with no timeout, runs on the calling thread when the
 * device is idle (no thread hand-off either way); meanwhile another
 * thread's execute or execute_async waits for it before queuing its own.
 */
int ipurt_runner_execute(struct ipurt_runner *r, const struct ipurt_tensor *inputs,
			 uint32_t nin, const struct ipurt_tensor *outputs, uint32_t nout,
			 char *err, size_t errlen);
/*
 * The session functions for state (above) on the runner's devices: reset
 * and write act on every device the model is loaded on (each holds its
 * own state), read reads the first.  With no request in flight.
 */
int ipurt_runner_reset_state(struct ipurt_runner *r, char *err, size_t errlen);
int ipurt_runner_read_state(struct ipurt_runner *r, const char *name, void *dst,
			    uint64_t bytes, char *err, size_t errlen);
int ipurt_runner_write_state(struct ipurt_runner *r, const char *name, const void *src,
			     uint64_t bytes, char *err, size_t errlen);
/*
 * Generation with a decoder compiled with its key/value cache as state
 * (Documentation/compiler/generation.md): inputs `input_ids` and
 * `position_ids` of one integer each, outputs `next_token` (the greedy
 * choice, computed on the device) and/or `logits` (one row of f32, or of
 * f16 for a model compiled in fp16, given to fn and the sampler as f32;
 * the greedy choice is then made on the host).
 *
 * ipurt_generate resets the state, feeds the prompt from position 0 (T
 * tokens a run of the model's IPUEF_PROGRAM_PREFILL program when it has
 * one, as far as whole runs fit the cache; else, and for the rest, one
 * token per step), then feeds back each new token, calling fn for each new
 * token (index from 0; logits only if want_logits and the model has them,
 * else NULL).  Greedy without want_logits, the steps run the model's
 * IPUEF_PROGRAM_TOKENS program when it has one: no logits cross to the
 * host, only the token, its position and next_token.  It ends after a stop token (reported first), after
 * max_new_tokens, when the cache is full (max_positions, 0: dim -2 of the
 * model's first state, [.., positions, head dim]) or when fn returns
 * non-zero.  st (may be NULL) says why and how fast.  The runner must have
 * one device (IPURT_E_INVAL for a replicated one: the cache lives on one
 * device) and no other request in flight.  On a decoder of several cache
 * slots (ipurt_gen_slots_* below) it runs the sequence in one slot.
 */
typedef int (*ipurt_token_fn)(void *ctx, uint32_t index, int64_t token, const float *logits,
			      uint64_t vocab);

struct ipurt_generate_opts {
	uint32_t max_new_tokens;	/* >= 1 */
	const int64_t *stop_ids;	/* may be NULL */
	uint32_t num_stop;
	uint64_t max_positions;		/* 0: the cache's */
	int want_logits;
	/*
	 * Sampling: 0 (default) greedy; > 0 sample from softmax(logits /
	 * temperature), among the top_k most likely tokens (0: all), then
	 * among the fewest whose probabilities add up to top_p (0 or >= 1:
	 * all).  The same seed gives the same tokens: token i's draw is
	 * ipu_sample_uniform(seed, position of the step that predicts it)
	 * (ipu/sample.h).  On the device when the model has the sampling
	 * program (IPUEF_PROGRAM_SAMPLE), top_k is 1..min(IPU_SAMPLE_MAX_K,
	 * vocab) (any, for a vocabulary of at most IPU_SAMPLE_MAX_K),
	 * want_logits is 0 and host_sampling is 0: a step then streams the
	 * token and a few scalars, not the logits; else on the host from the
	 * logits, with the same sampler and the same tokens.
	 */
	float temperature;
	uint32_t top_k;
	float top_p;
	uint64_t seed;
	int host_sampling;	/* 1: sample on the host even when the device could */
};

enum ipurt_gen_stop {
	IPURT_GEN_STOP_LIMIT = 0,	/* max_new_tokens */
	IPURT_GEN_STOP_TOKEN = 1,	/* a stop token */
	IPURT_GEN_STOP_CALLER = 2,	/* fn returned non-zero */
	IPURT_GEN_STOP_CACHE_FULL = 3,	/* every position used */
};

struct ipurt_generate_stats {
	uint32_t prompt_tokens, new_tokens;
	uint32_t decode_steps;		/* steps after the prompt's */
	uint32_t stopped;		/* enum ipurt_gen_stop */
	int device_argmax;		/* 1: greedy tokens from the model's next_token */
	uint64_t prompt_ns;		/* wall time of the prompt's steps (new token 0) */
	uint64_t decode_ns;		/* of the decode steps (new tokens 1..) */
	uint64_t stream_bytes_per_step;	/* in + out of the last step (device counters) */
	/* The model's prefill program (ipu-compile --prefill-model): runs of
	 * it and prompt tokens it took (the rest took a step each). */
	uint32_t prefill_runs, prefill_tokens;
	/* Modelled device cycles of the prompt's runs and steps (new token 0
	 * included; the device's counters, 0 without them). */
	uint64_t prompt_cycles;
	int device_sampling;		/* 1: sampled tokens drawn on the device */
};

int ipurt_generate(struct ipurt_runner *r, const int64_t *prompt, uint32_t nprompt,
		   const struct ipurt_generate_opts *o, ipurt_token_fn fn, void *ctx,
		   struct ipurt_generate_stats *st, char *err, size_t errlen);

/*
 * Several sequences at once: the step API a scheduler drives (continuous
 * batching).  The decoder is exported with S cache slots: inputs
 * `input_ids` and `position_ids` [S, 1], outputs `next_token` [S, 1]
 * and/or `logits` [S, 1, vocab], every cache [S, heads, positions, head
 * dim] (tests/gen/tiny_gpt.py --slots S; S = 1 is an ordinary decoder),
 * compiled with its caches as state; row s of each is slot s's sequence.
 *
 *   ipurt_gen_slots_open     binds a runner of one device, every slot free
 *                            (the caches reset);
 *   ipurt_gen_slots_start    puts a sequence (prompt, options as for
 *                            ipurt_generate, copied) into a free slot:
 *                            *slot; IPURT_E_BUSY when none is free;
 *   ipurt_gen_slots_step     runs one device step for every slot: each
 *                            active one takes its next prompt token, or
 *                            its last new token, at its own position (a
 *                            prompt costs one step per token, but on a
 *                            decoder of one slot with a prefill program
 *                            ipurt_gen_slots_start runs the prompt through
 *                            it, and the next step call gives the first
 *                            new token without a device step); writes one
 *                            event per new token into ev (room for
 *                            ipurt_gen_slots_count() events), *nev of
 *                            them.  A sequence that ends (a stop token,
 *                            max_new_tokens, its cache full) says so in its
 *                            last event (done, stopped) and frees its slot.
 *                            No active slot: no step, *nev = 0;
 *   ipurt_gen_slots_finish   ends a sequence early and frees its slot
 *                            (IPURT_E_INVAL for a slot not in use);
 *   ipurt_gen_slots_close    frees the handle (the runner stays).
 *
 * A step costs the same for 1 or S active slots (the device computes all
 * S rows; a free slot's row writes only its cache's position 0, which the
 * next sequence there overwrites before reading).  When no active slot
 * samples or wants logits the step runs the tokens-only program (S
 * tokens, positions and next_tokens cross, no logits).  Sampling is on
 * the host, each slot with its own splitmix64 stream seeded by its
 * options.  An event's logits (want_logits) are valid until the next step.
 * One thread at a time; no other request on the runner meanwhile.
 */
struct ipurt_gen_slots;

struct ipurt_gen_event {
	uint32_t slot;
	uint32_t index;		/* the sequence's new token index, from 0 */
	int64_t token;
	const float *logits;	/* want_logits: this step's row, else NULL */
	uint64_t vocab;
	int done;		/* the sequence ended with this token */
	uint32_t stopped;	/* enum ipurt_gen_stop, when done */
};

int ipurt_gen_slots_open(struct ipurt_runner *r, struct ipurt_gen_slots **g, char *err,
			 size_t errlen);
uint32_t ipurt_gen_slots_count(const struct ipurt_gen_slots *g);
/* Slots holding a sequence. */
uint32_t ipurt_gen_slots_active(const struct ipurt_gen_slots *g);
int ipurt_gen_slots_start(struct ipurt_gen_slots *g, const int64_t *prompt, uint32_t nprompt,
			  const struct ipurt_generate_opts *o, uint32_t *slot, char *err,
			  size_t errlen);
int ipurt_gen_slots_step(struct ipurt_gen_slots *g, struct ipurt_gen_event *ev, uint32_t *nev,
			 char *err, size_t errlen);
int ipurt_gen_slots_finish(struct ipurt_gen_slots *g, uint32_t slot);
/* Stream bytes (in + out, the device's counters) of the last step. */
uint64_t ipurt_gen_slots_stream_bytes(const struct ipurt_gen_slots *g);
void ipurt_gen_slots_close(struct ipurt_gen_slots *g);

/* Start a request; wait for it with ipurt_future_wait. */
int ipurt_runner_execute_async(struct ipurt_runner *r, const struct ipurt_tensor *inputs,
			       uint32_t nin, const struct ipurt_tensor *outputs, uint32_t nout,
			       struct ipurt_future **f, char *err, size_t errlen);
/*
 * Wait for a request (timeout_ns < 0: up to the runner's timeout_ns, or
 * forever if that is 0).  Returns its status.  The future stays valid for
 * more waits until ipurt_future_free.
 */
int ipurt_future_wait(struct ipurt_future *f, int64_t timeout_ns, char *err, size_t errlen);
/* Non-zero once the request finished (its status is then final). */
int ipurt_future_done(struct ipurt_future *f);
void ipurt_future_free(struct ipurt_future *f);

#endif /* IPU_RUNTIME_H */
