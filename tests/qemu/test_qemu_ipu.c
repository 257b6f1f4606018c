// SPDX-License-Identifier: MIT
/*
 * test_qemu_ipu.c - device tests of the QEMU `ipu` PCI function, without a
 * guest kernel: each test starts the built qemu-system-x86_64 with
 * `-accel qtest`, speaks the qtest text protocol over a unix socket and
 * plays the driver itself: PCI config cycles through 0xcf8/0xcfc, BAR and
 * guest memory accesses, rings and descriptors built in guest RAM, MSI-X
 * messages aimed at guest RAM so that they can be read back.
 *
 * The QEMU binary: $IPU_QEMU, else build/qemu/qemu-system-x86_64 (made by
 * `make qemu`).  Executables come from the graph builder; every result is
 * compared with the same executable run by the in-process engine.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ipu/codelet.h"
#include "ipu/engine.h"
#include "harness.h"
#include "ipu/graph.h"
#include "../../qemu-device/ipu_regs.h"

#define TILES 16
#define TILE_MEM (64 * 1024)
#define TIMEOUT_MS 30000

/* ------------------------------------------------------------------ */
/* qtest connection                                                    */

struct qt {
	pid_t pid;
	int fd;
	char path[108];
	char *buf;		/* receive buffer */
	size_t len, cap;
	char *line;		/* last reply line */
	size_t line_cap;
	int dead;
	int irq[64];		/* intercepted interrupt lines (irq_intercept_in) */
};

static const char *qemu_bin(void)
{
	const char *p = getenv("IPU_QEMU");

	return p && *p ? p : "build/qemu/qemu-system-x86_64";
}

static void msleep(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Start QEMU with the given -device arguments (NULL-terminated). */
static int qt_start(struct qt *q, const char *const *devs)
{
	static int seq;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *argv[64];
	char qtarg[160];
	int lfd, n = 0, i;
	struct pollfd pfd;

	memset(q, 0, sizeof(*q));
	q->fd = -1;
	snprintf(q->path, sizeof(q->path), "/tmp/ipu-qtest-%d-%d.sock", (int)getpid(), seq++);
	unlink(q->path);
	lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (lfd < 0)
		return -1;
	memcpy(sa.sun_path, q->path, strlen(q->path) + 1);
	if (bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, 1)) {
		close(lfd);
		return -1;
	}
	snprintf(qtarg, sizeof(qtarg), "unix:%s", q->path);
	argv[n++] = qemu_bin();
	argv[n++] = "-machine";
	argv[n++] = "q35";
	argv[n++] = "-accel";
	argv[n++] = "qtest";
	argv[n++] = "-qtest";
	argv[n++] = qtarg;
	argv[n++] = "-qtest-log";
	argv[n++] = getenv("IPU_QTEST_LOG") ? getenv("IPU_QTEST_LOG") : "/dev/null";
	argv[n++] = "-display";
	argv[n++] = "none";
	argv[n++] = "-nodefaults";
	argv[n++] = "-m";
	argv[n++] = "256M";
	argv[n++] = "-L";
	argv[n++] = "/usr/share/seabios";
	argv[n++] = "-L";
	argv[n++] = "/usr/share/qemu";
	/* the device's trace events and guest-error log, for run-qtest-trace */
	if (getenv("IPU_QEMU_DEBUG_LOG")) {
		argv[n++] = "-trace";
		argv[n++] = "ipu_*";
		argv[n++] = "-d";
		argv[n++] = "guest_errors,unimp";
		argv[n++] = "-D";
		argv[n++] = getenv("IPU_QEMU_DEBUG_LOG");
	}
	for (i = 0; devs[i] && n < 60; i++) {
		argv[n++] = "-device";
		argv[n++] = devs[i];
	}
	argv[n] = NULL;
	q->pid = fork();
	if (q->pid == 0) {
		execv(argv[0], (char *const *)argv);
		fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	pfd.fd = lfd;
	pfd.events = POLLIN;
	/* a QEMU that refuses its command line exits: do not wait for it */
	for (i = 0; q->pid > 0 && i < TIMEOUT_MS / 100; i++) {
		int st;

		if (poll(&pfd, 1, 100) == 1)
			break;
		if (waitpid(q->pid, &st, WNOHANG) == q->pid) {
			q->pid = -1;
			break;
		}
	}
	if (q->pid < 0 || poll(&pfd, 1, 0) != 1) {
		fprintf(stderr, "  qemu did not connect (%s)\n", argv[0]);
		close(lfd);
		if (q->pid > 0) {
			kill(q->pid, SIGKILL);
			waitpid(q->pid, NULL, 0);
		}
		unlink(q->path);
		return -1;
	}
	q->fd = accept(lfd, NULL, NULL);
	close(lfd);
	unlink(q->path);
	return q->fd < 0 ? -1 : 0;
}

/* Is QEMU still running? */
static int qt_alive(struct qt *q)
{
	int st;

	if (q->dead)
		return 0;
	if (waitpid(q->pid, &st, WNOHANG) == q->pid) {
		q->dead = 1;
		fprintf(stderr, "  qemu exited: %s %d\n", WIFSIGNALED(st) ? "signal" : "status",
			WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
		return 0;
	}
	return 1;
}

static void qt_stop(struct qt *q)
{
	int st;

	if (!q->dead && q->pid > 0) {
		kill(q->pid, SIGTERM);
		for (int i = 0; i < 100; i++) {
			if (waitpid(q->pid, &st, WNOHANG) == q->pid)
				break;
			if (i == 99) {
				kill(q->pid, SIGKILL);
				waitpid(q->pid, &st, 0);
			}
			msleep(20);
		}
	}
	if (q->fd >= 0)
		close(q->fd);
	q->fd = -1;
	free(q->buf);
	free(q->line);
	q->buf = q->line = NULL;
}

/* Send one command, return its reply line (without "OK "), NULL on FAIL. */
static const char *qt_cmd(struct qt *q, const char *fmt, ...)
{
	va_list ap;
	char small[256], *msg = small;
	int n;
	size_t off = 0;

	if (q->fd < 0 || q->dead)
		return NULL;
	va_start(ap, fmt);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n >= (int)sizeof(small)) {
		msg = malloc(n + 1);
		va_start(ap, fmt);
		vsnprintf(msg, n + 1, fmt, ap);
		va_end(ap);
	}
	while (off < (size_t)n) {
		ssize_t w = write(q->fd, msg + off, n - off);

		if (w <= 0) {
			if (msg != small)
				free(msg);
			q->dead = 1;
			return NULL;
		}
		off += w;
	}
	if (msg != small)
		free(msg);
	for (;;) {
		char *nl = q->len ? memchr(q->buf, '\n', q->len) : NULL;

		if (nl) {
			size_t l = nl - q->buf;

			if (l + 1 > q->line_cap) {
				q->line_cap = l + 1;
				q->line = realloc(q->line, q->line_cap);
			}
			memcpy(q->line, q->buf, l);
			q->line[l] = 0;
			memmove(q->buf, nl + 1, q->len - l - 1);
			q->len -= l + 1;
			if (!strncmp(q->line, "IRQ ", 4)) {
				int line = -1;

				if (sscanf(q->line, "IRQ raise %d", &line) == 1 && line >= 0 && line < 64)
					q->irq[line] = 1;
				else if (sscanf(q->line, "IRQ lower %d", &line) == 1 && line >= 0 && line < 64)
					q->irq[line] = 0;
				continue;
			}
			if (!strncmp(q->line, "OK", 2))
				return q->line[2] ? q->line + 3 : q->line + 2;
			fprintf(stderr, "  qtest: %s\n", q->line);
			return NULL;
		}
		if (q->cap - q->len < 65536) {
			q->cap = q->cap ? q->cap * 2 : 1 << 20;
			q->buf = realloc(q->buf, q->cap);
		}
		{
			struct pollfd pfd = { .fd = q->fd, .events = POLLIN };
			ssize_t r;

			if (poll(&pfd, 1, TIMEOUT_MS) != 1) {
				fprintf(stderr, "  qtest: no reply\n");
				q->dead = 1;
				return NULL;
			}
			r = read(q->fd, q->buf + q->len, q->cap - q->len);
			if (r <= 0) {
				q->dead = 1;
				return NULL;
			}
			q->len += r;
		}
	}
}

static uint64_t qt_num(struct qt *q, const char *fmt, ...)
{
	va_list ap;
	char cmd[256];
	const char *r;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	r = qt_cmd(q, "%s", cmd);
	return r ? strtoull(r, NULL, 0) : ~0ULL;
}

static uint32_t readl(struct qt *q, uint64_t a)
{
	return (uint32_t)qt_num(q, "readl 0x%llx\n", (unsigned long long)a);
}

static void writel(struct qt *q, uint64_t a, uint32_t v)
{
	qt_cmd(q, "writel 0x%llx 0x%x\n", (unsigned long long)a, v);
}

static void mem_write(struct qt *q, uint64_t a, const void *data, size_t len)
{
	const uint8_t *p = data;
	char *hex = malloc(len * 2 + 1);
	size_t i;

	for (i = 0; i < len; i++)
		sprintf(hex + 2 * i, "%02x", p[i]);
	qt_cmd(q, "write 0x%llx 0x%zx 0x%s\n", (unsigned long long)a, len, hex);
	free(hex);
}

static int hexval(char c)
{
	return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
}

static int mem_read(struct qt *q, uint64_t a, void *data, size_t len)
{
	const char *r = qt_cmd(q, "read 0x%llx 0x%zx\n", (unsigned long long)a, len);
	uint8_t *p = data;
	size_t i;

	if (!r || strncmp(r, "0x", 2) || strlen(r) < 2 + 2 * len) {
		memset(data, 0xee, len);
		return -1;
	}
	for (i = 0; i < len; i++)
		p[i] = (uint8_t)(hexval(r[2 + 2 * i]) << 4 | hexval(r[3 + 2 * i]));
	return 0;
}

static void mem_zero(struct qt *q, uint64_t a, size_t len)
{
	qt_cmd(q, "memset 0x%llx 0x%zx 0\n", (unsigned long long)a, len);
}

/* PCI configuration space of bus 0 through the 0xcf8/0xcfc ports. */
static uint32_t cfg_addr(int slot, int reg)
{
	return 0x80000000u | (uint32_t)slot << 11 | (uint32_t)(reg & 0xfc);
}

static uint32_t cfg_read32(struct qt *q, int slot, int reg)
{
	qt_cmd(q, "outl 0xcf8 0x%x\n", cfg_addr(slot, reg));
	return (uint32_t)qt_num(q, "inl 0xcfc\n");
}

static uint16_t cfg_read16(struct qt *q, int slot, int reg)
{
	qt_cmd(q, "outl 0xcf8 0x%x\n", cfg_addr(slot, reg));
	return (uint16_t)qt_num(q, "inw 0x%x\n", 0xcfc + (reg & 2));
}

static void cfg_write32(struct qt *q, int slot, int reg, uint32_t v)
{
	qt_cmd(q, "outl 0xcf8 0x%x\n", cfg_addr(slot, reg));
	qt_cmd(q, "outl 0xcfc 0x%x\n", v);
}

static void cfg_write16(struct qt *q, int slot, int reg, uint16_t v)
{
	qt_cmd(q, "outl 0xcf8 0x%x\n", cfg_addr(slot, reg));
	qt_cmd(q, "outw 0x%x 0x%x\n", 0xcfc + (reg & 2), v);
}

/* ------------------------------------------------------------------ */
/* a little driver                                                     */

#define CMDQ_N 64
#define CPLQ_N 64
#define SCQ_N 64
#define SRING_N 16

struct dev {
	struct qt *q;
	int slot;
	uint64_t bar0, bar2;
	uint64_t mem;		/* this device's 16 MiB of guest RAM */
	uint64_t cmdq, cplq, scq, msi;
	uint32_t cmd_tail, cpl_head, scq_head;
	int cpl_phase, scq_phase;
	uint64_t next_tag;
	uint64_t heap;		/* bump allocator for buffers and SG lists */
};

#define R(d, reg) readl((d)->q, (d)->bar0 + (reg))
#define W(d, reg, v) writel((d)->q, (d)->bar0 + (reg), (v))

static uint64_t dev_alloc(struct dev *d, uint64_t bytes, uint64_t align)
{
	uint64_t a = (d->heap + align - 1) & ~(align - 1);

	d->heap = a + bytes;
	return a;
}

static int wait_status(struct dev *d, uint32_t mask, uint32_t want)
{
	long long t0 = now_ms();

	while (now_ms() - t0 < TIMEOUT_MS) {
		uint32_t st = R(d, IPU_REG_STATUS);

		if (st == UINT32_MAX && !qt_alive(d->q))
			return -1;
		if ((st & mask) == want)
			return 0;
		msleep(1);
	}
	fprintf(stderr, "  status 0x%x: timeout waiting for 0x%x under 0x%x\n",
		R(d, IPU_REG_STATUS), want, mask);
	return -1;
}

/* Program the rings and enable (after a reset). */
static int dev_enable(struct dev *d)
{
	if (wait_status(d, IPU_STS_RESETTING, 0))
		return -1;
	d->cmdq = d->mem;
	d->cplq = d->mem + 0x1000;
	d->scq = d->mem + 0x2000;
	d->msi = d->mem + 0x3000;
	d->heap = d->mem + 0x100000;
	mem_zero(d->q, d->mem, 0x100000);
	d->cmd_tail = d->cpl_head = d->scq_head = 0;
	d->cpl_phase = d->scq_phase = 1;
	W(d, IPU_REG_CMDQ_BASE_LO, (uint32_t)d->cmdq);
	W(d, IPU_REG_CMDQ_BASE_HI, (uint32_t)(d->cmdq >> 32));
	W(d, IPU_REG_CMDQ_SIZE, CMDQ_N);
	W(d, IPU_REG_CPLQ_BASE_LO, (uint32_t)d->cplq);
	W(d, IPU_REG_CPLQ_BASE_HI, 0);
	W(d, IPU_REG_CPLQ_SIZE, CPLQ_N);
	W(d, IPU_REG_SCQ_BASE_LO, (uint32_t)d->scq);
	W(d, IPU_REG_SCQ_BASE_HI, 0);
	W(d, IPU_REG_SCQ_SIZE, SCQ_N);
	W(d, IPU_REG_CONTROL, IPU_CTRL_ENABLE);
	/* ENABLE is decided at once: READY, or refused (CONTROL reads 0) */
	if (R(d, IPU_REG_CONTROL) != IPU_CTRL_ENABLE)
		return -1;
	return wait_status(d, IPU_STS_READY, IPU_STS_READY);
}

static int find_cap(struct qt *q, int slot, int id)
{
	int p = cfg_read32(q, slot, 0x34) & 0xfc;

	for (int n = 0; p && n < 48; n++) {
		uint32_t v = cfg_read32(q, slot, p);

		if ((v & 0xff) == (uint32_t)id)
			return p;
		p = (v >> 8) & 0xfc;
	}
	return 0;
}

/* Assign the BARs, enable memory + bus mastering and (unless no_msix)
 * MSI-X, then enable. */
static int dev_setup_irq(struct dev *d, struct qt *q, int slot, int index, int no_msix)
{
	int cap, i;
	uint32_t tbl;

	memset(d, 0, sizeof(*d));
	d->q = q;
	d->slot = slot;
	d->bar0 = 0xe0000000ull + (uint64_t)index * 0x100000;
	d->bar2 = d->bar0 + 0x10000;
	d->mem = 0x1000000ull * (uint64_t)(index + 1);
	d->next_tag = 0x1000 * (uint64_t)(index + 1);
	if (cfg_read32(q, slot, 0) != (IPU_PCI_DEVICE_ID << 16 | IPU_PCI_VENDOR_ID))
		return -1;
	cfg_write32(q, slot, 0x10, (uint32_t)d->bar0);
	cfg_write32(q, slot, 0x10 + 4 * IPU_BAR_MSIX, (uint32_t)d->bar2);
	cfg_write16(q, slot, 0x04, 0x6);	/* memory space + bus master */
	cap = find_cap(q, slot, 0x11);
	if (!cap)
		return -1;
	tbl = cfg_read32(q, slot, cap + 4);
	d->msi = d->mem + 0x3000;
	for (i = 0; i < IPU_NUM_VECTORS; i++) {
		uint64_t e = d->bar2 + (tbl & ~7u) + 16 * i;

		writel(q, e, (uint32_t)(d->msi + 4 * i));
		writel(q, e + 4, 0);
		writel(q, e + 8, 0x100 + i);
		writel(q, e + 12, 0);	/* unmasked */
	}
	if (!no_msix)
		cfg_write16(q, slot, cap + 2, 0x8000);	/* MSI-X enable */
	return dev_enable(d);
}

static int dev_setup(struct dev *d, struct qt *q, int slot, int index)
{
	return dev_setup_irq(d, q, slot, index, 0);
}

/* Number of times vector v fired since the last call (0 or "at least 1"). */
static int msi_fired(struct dev *d, int v)
{
	uint32_t val = readl(d->q, d->msi + 4 * v);

	writel(d->q, d->msi + 4 * v, 0);
	return val == 0x100u + (uint32_t)v;
}

static uint64_t submit(struct dev *d, struct ipu_cmd *c)
{
	if (!c->tag)
		c->tag = d->next_tag++;
	mem_write(d->q, d->cmdq + (uint64_t)d->cmd_tail * sizeof(*c), c, sizeof(*c));
	d->cmd_tail = (d->cmd_tail + 1) % CMDQ_N;
	W(d, IPU_REG_CMDQ_TAIL, d->cmd_tail);
	return c->tag;
}

static int wait_ring(struct dev *d, uint64_t ring, uint32_t n, uint32_t *head, int *phase,
		     uint32_t db, struct ipu_cpl *out, int timeout_ms)
{
	long long t0 = now_ms();

	for (;;) {
		uint64_t a = ring + (uint64_t)*head * sizeof(*out);
		uint32_t w = readl(d->q, a + 24);	/* status | opcode | flags */

		if ((int)((w >> 24) & IPU_CPL_PHASE) == *phase) {
			mem_read(d->q, a, out, sizeof(*out));
			*head = (*head + 1) % n;
			if (*head == 0)
				*phase ^= 1;
			W(d, db, *head);
			return 0;
		}
		if (now_ms() - t0 > timeout_ms || !qt_alive(d->q))
			return -1;
		msleep(1);
	}
}

static int wait_cpl(struct dev *d, struct ipu_cpl *c)
{
	int rc = wait_ring(d, d->cplq, CPLQ_N, &d->cpl_head, &d->cpl_phase,
			   IPU_REG_CPLQ_HEAD, c, TIMEOUT_MS);

	if (rc)
		memset(c, 0xff, sizeof(*c));
	return rc;
}

static int wait_scpl(struct dev *d, struct ipu_cpl *c)
{
	int rc = wait_ring(d, d->scq, SCQ_N, &d->scq_head, &d->scq_phase,
			   IPU_REG_SCQ_HEAD, c, TIMEOUT_MS);

	if (rc)
		memset(c, 0xff, sizeof(*c));
	return rc;
}

/* No completion arrives within ms. */
static int no_cpl(struct dev *d, int ms)
{
	struct ipu_cpl c;
	uint32_t head = d->cpl_head;
	int phase = d->cpl_phase;

	if (wait_ring(d, d->cplq, CPLQ_N, &head, &phase, IPU_REG_CPLQ_HEAD, &c, ms) == 0) {
		fprintf(stderr, "  unexpected completion status %u tag 0x%llx\n", c.status,
			(unsigned long long)c.tag);
		return 0;
	}
	return 1;
}

/* Submit and wait for the completion; returns its status. */
static int cmd(struct dev *d, struct ipu_cmd *c, struct ipu_cpl *out)
{
	struct ipu_cpl tmp, *o = out ? out : &tmp;
	uint64_t tag = submit(d, c);

	if (wait_cpl(d, o))
		return -1;
	if (o->tag != tag) {
		fprintf(stderr, "  completion tag 0x%llx, expected 0x%llx\n",
			(unsigned long long)o->tag, (unsigned long long)tag);
		return -2;
	}
	return o->status;
}

static int nop(struct dev *d)
{
	struct ipu_cmd c = { .opcode = IPU_CMD_NOP };

	return cmd(d, &c, NULL);
}

/* Copy `len` bytes into guest memory split into `pieces` scattered chunks
 * and build an SG list for them; returns the SG list's address. */
static uint64_t make_sg(struct dev *d, const void *data, uint32_t len, uint32_t pieces)
{
	struct ipu_sg *sg = calloc(pieces, sizeof(*sg));
	uint64_t list = dev_alloc(d, pieces * sizeof(*sg), 16);
	uint32_t off = 0, i;

	for (i = 0; i < pieces; i++) {
		uint32_t n = i == pieces - 1 ? len - off : len / pieces;
		/* odd placement: a gap and an unaligned start */
		uint64_t a = dev_alloc(d, n + 64, 8) + 3 + (i % 5);

		if (data)
			mem_write(d->q, a, (const uint8_t *)data + off, n);
		sg[i].addr = a;
		sg[i].len = n;
		off += n;
	}
	mem_write(d->q, list, sg, pieces * sizeof(*sg));
	free(sg);
	return list;
}

/* Read back the buffer described by an SG list made by make_sg. */
static void read_sg(struct dev *d, uint64_t list, uint32_t pieces, void *out)
{
	struct ipu_sg *sg = calloc(pieces, sizeof(*sg));
	uint32_t off = 0, i;

	mem_read(d->q, list, sg, pieces * sizeof(*sg));
	for (i = 0; i < pieces; i++) {
		mem_read(d->q, sg[i].addr, (uint8_t *)out + off, sg[i].len);
		off += sg[i].len;
	}
	free(sg);
}

static int load_exe(struct dev *d, const void *img, size_t len, struct ipu_cpl *out)
{
	struct ipu_cmd c = { .opcode = IPU_CMD_LOAD_EXE };

	c.addr = make_sg(d, img, (uint32_t)len, 3);
	c.sg_count = 3;
	c.len = (uint32_t)len;
	return cmd(d, &c, out);
}

static int create_stream(struct dev *d, uint32_t id, uint64_t *ring)
{
	struct ipu_cmd c = { .opcode = IPU_CMD_CREATE_STREAM };

	*ring = dev_alloc(d, SRING_N * sizeof(struct ipu_stream_desc), 64);
	c.arg0 = id;
	c.addr = *ring;
	c.len = SRING_N;
	return cmd(d, &c, NULL);
}

struct sring {
	uint32_t id;
	uint64_t base;
	uint32_t tail;
};

static int sring_create(struct dev *d, struct sring *s, uint32_t id)
{
	s->id = id;
	s->tail = 0;
	return create_stream(d, id, &s->base);
}

static void sring_push(struct dev *d, struct sring *s, struct ipu_stream_desc *desc)
{
	mem_write(d->q, s->base + (uint64_t)s->tail * sizeof(*desc), desc, sizeof(*desc));
	s->tail = (s->tail + 1) % SRING_N;
	W(d, IPU_REG_STREAM_DB(s->id), s->tail);
}

static void run_async(struct dev *d, uint32_t prog, uint64_t tag)
{
	struct ipu_cmd c = { .opcode = IPU_CMD_RUN, .arg0 = prog, .tag = tag };

	submit(d, &c);
}

/* ------------------------------------------------------------------ */
/* executables and the in-process reference                           */

struct exe {
	void *img;
	size_t len;
	uint32_t n;		/* elements of x and y */
};

/* y = (x * 2 + 1) then an exchange: y's halves swap tiles through z. */
static int build_affine(struct exe *x, uint32_t n, uint32_t ntiles)
{
	struct ipu_graph *g = ipu_graph_create(TILES, TILE_MEM);
	uint64_t nn = n, one = 1;
	ipu_tensor tx, ty, tz;
	uint32_t in, out, cs1, cs2, t;
	ipu_step seq;
	int used, rc;

	if (!g)
		return -1;
	tx = ipu_graph_add_tensor(g, "x", IPUX_DT_F32, 1, &nn);
	ty = ipu_graph_add_tensor(g, "y", IPUX_DT_F32, 1, &nn);
	tz = ipu_graph_add_tensor(g, "z", IPUX_DT_F32, 1, &nn);
	used = ipu_graph_map_linear(g, tx, 0, ntiles, 4);
	ipu_graph_map_linear(g, ty, 0, ntiles, 4);
	ipu_graph_map_linear(g, tz, ntiles, ntiles, 4);
	cs1 = ipu_graph_add_compute_set(g, "mul");
	cs2 = ipu_graph_add_compute_set(g, "add");
	for (t = 0; t < (uint32_t)used; t++) {
		uint64_t b, e;
		uint32_t tile, off;
		char name[32];
		float v2 = 2.0f, v1 = 1.0f;
		ipu_tensor two, c1;

		ipu_graph_tensor_location(g, tx, t, &tile, &b, &e, &off);
		snprintf(name, sizeof(name), "two%u", t);
		two = ipu_graph_add_tensor(g, name, IPUX_DT_F32, 1, &one);
		snprintf(name, sizeof(name), "one%u", t);
		c1 = ipu_graph_add_tensor(g, name, IPUX_DT_F32, 1, &one);
		ipu_graph_map_tile(g, two, tile);
		ipu_graph_map_tile(g, c1, tile);
		ipu_graph_set_init(g, two, &v2, 4);
		ipu_graph_set_init(g, c1, &v1, 4);
		{
			struct ipu_slice ops[3] = { { tx, b, e - b }, { two, 0, 1 }, { ty, b, e - b } };
			uint32_t p[5] = { IPUX_BIN_MUL, 1, (uint32_t)(e - b), 1, 0 };

			ipu_graph_add_vertex(g, cs1, IPUX_CL_BINARY, ops, 3, p, 5);
		}
		{
			struct ipu_slice ops[3] = { { ty, b, e - b }, { c1, 0, 1 }, { ty, b, e - b } };
			uint32_t p[5] = { IPUX_BIN_ADD, 1, (uint32_t)(e - b), 1, 0 };

			ipu_graph_add_vertex(g, cs2, IPUX_CL_BINARY, ops, 3, p, 5);
		}
	}
	in = ipu_graph_add_stream(g, "x", IPUX_STREAM_H2D, n * 4);
	out = ipu_graph_add_stream(g, "z", IPUX_STREAM_D2H, n * 4);
	seq = ipu_step_sequence(g);
	ipu_step_append(g, seq, ipu_step_stream_copy(g, in, &(struct ipu_slice){ tx, 0, nn }, 1));
	ipu_step_append(g, seq, ipu_step_execute(g, cs1));
	ipu_step_append(g, seq, ipu_step_sync(g, IPUX_SYNC_INTERNAL));
	ipu_step_append(g, seq, ipu_step_execute(g, cs2));
	{
		ipu_step xch = ipu_step_exchange(g);
		uint64_t h = nn / 2;

		ipu_exchange_add(g, xch, (struct ipu_slice){ ty, 0, h }, (struct ipu_slice){ tz, nn - h, h });
		ipu_exchange_add(g, xch, (struct ipu_slice){ ty, h, nn - h }, (struct ipu_slice){ tz, 0, nn - h });
		ipu_step_append(g, seq, xch);
	}
	ipu_step_append(g, seq, ipu_step_stream_copy(g, out, &(struct ipu_slice){ tz, 0, nn }, 1));
	ipu_graph_add_program(g, seq);
	rc = ipu_graph_compile(g, &x->img, &x->len, NULL);
	if (rc)
		fprintf(stderr, "  compile: %s\n", ipu_graph_error(g));
	ipu_graph_destroy(g);
	x->n = n;
	return rc;
}

struct ref_io {
	const void *in;
	void *out;
	uint32_t in_len, out_len;
};

static int ref_transfer(void *ctx, uint32_t stream, uint32_t dir,
			const struct ipu_stream_seg *segs, uint32_t nsegs,
			uint32_t total, int *stalled)
{
	struct ref_io *io = ctx;
	uint32_t off = 0, i;

	(void)stream;
	*stalled = 0;
	for (i = 0; i < nsegs; i++) {
		if (dir == IPUX_STREAM_H2D)
			memcpy(segs[i].ptr, (const uint8_t *)io->in + off, segs[i].len);
		else
			memcpy((uint8_t *)io->out + off, segs[i].ptr, segs[i].len);
		off += segs[i].len;
	}
	return off == total ? 0 : IPU_E_STREAM;
}

/* The same executable run by the in-process engine. */
static int ref_run(const struct exe *x, const float *in, float *out)
{
	struct ipu_engine_config cfg = { TILES, TILE_MEM, 2 };
	struct ref_io io = { in, out, x->n * 4, x->n * 4 };
	struct ipu_stream_ops ops = { ref_transfer, &io };
	struct ipu_engine *e;
	char err[256];
	int rc;

	rc = ipu_engine_create(&cfg, &ops, &e, err, sizeof(err));
	if (rc)
		return rc;
	rc = ipu_engine_load(e, x->img, x->len, err, sizeof(err));
	if (!rc)
		rc = ipu_engine_run(e, 0, err, sizeof(err));
	if (rc)
		fprintf(stderr, "  reference: %s: %s\n", ipu_err_name(rc), err);
	ipu_engine_destroy(e);
	return rc;
}

static void fill_input(float *v, uint32_t n, int seed)
{
	for (uint32_t i = 0; i < n; i++)
		v[i] = (float)((int)(i * 37u + (uint32_t)seed * 11u) % 1001) * 0.37f - 150.25f;
}

#define DEV_ARGS(slot, serial) "ipu,addr=" slot ",tiles=16,tile-mem=65536,workers=2,serial=" serial

/* One device, set up, with the affine executable built. */
struct fixture {
	struct qt q;
	struct dev d;
	struct exe x;
};

static int fx_start(struct fixture *f)
{
	const char *devs[] = { DEV_ARGS("4", "0x1111"), NULL };

	memset(f, 0, sizeof(*f));
	if (build_affine(&f->x, 1000, 4))
		return -1;
	if (qt_start(&f->q, devs))
		return -1;
	return dev_setup(&f->d, &f->q, 4, 0);
}

static void fx_stop(struct fixture *f)
{
	qt_stop(&f->q);
	free(f->x.img);
}

/* Queue one input and one output buffer (SG lists of `pieces`). */
static void queue_io(struct dev *d, struct sring *sin, struct sring *sout, const float *in,
		     uint32_t n, uint32_t pieces, uint64_t *out_list, uint64_t tag)
{
	struct ipu_stream_desc di = { 0 }, dout = { 0 };

	di.addr = make_sg(d, in, n * 4, pieces);
	di.len = n * 4;
	di.sg_count = pieces;
	di.tag = tag;
	sring_push(d, sin, &di);
	dout.addr = *out_list = make_sg(d, NULL, n * 4, pieces + 1);
	dout.len = n * 4;
	dout.sg_count = pieces + 1;
	dout.tag = tag + 1;
	sring_push(d, sout, &dout);
}

/* ------------------------------------------------------------------ */
/* tests                                                               */

TEST(identity)
{
	const char *devs[] = { "ipu,addr=4,tiles=16,tile-mem=65536,version=3,serial=0xabcdef0123,workers=1",
			       NULL };
	struct qt q;
	struct dev d;
	int cap;

	REQUIRE(qt_start(&q, devs) == 0);
	CHECK_EQ_INT(cfg_read32(&q, 4, 0), IPU_PCI_DEVICE_ID << 16 | IPU_PCI_VENDOR_ID);
	CHECK_EQ_INT(cfg_read16(&q, 4, 0x0a), IPU_PCI_CLASS);
	CHECK_EQ_INT(cfg_read32(&q, 4, 0x08) & 0xff, IPU_IF_VERSION_MAJOR);
	CHECK(find_cap(&q, 4, 0x11) != 0);	/* MSI-X */
	CHECK(find_cap(&q, 4, 0x10) != 0);	/* PCI Express */
	cap = find_cap(&q, 4, 0x11);
	CHECK_EQ_INT((cfg_read16(&q, 4, cap + 2) & 0x7ff) + 1, IPU_NUM_VECTORS);
	CHECK(dev_setup(&d, &q, 4, 0) == 0);
	CHECK_EQ_INT(R(&d, IPU_REG_ID), IPU_ID_MAGIC);
	CHECK_EQ_INT(R(&d, IPU_REG_IF_VERSION), IPU_IF_VERSION);
	CHECK_EQ_INT(R(&d, IPU_REG_HW_VERSION), 3);
	CHECK_EQ_INT(R(&d, IPU_REG_SERIAL_LO), 0xcdef0123u);
	CHECK_EQ_INT(R(&d, IPU_REG_SERIAL_HI), 0xab);
	CHECK_EQ_INT(R(&d, IPU_REG_TILES), 16);
	CHECK_EQ_INT(R(&d, IPU_REG_TILE_MEM), 65536);
	CHECK_EQ_INT(R(&d, IPU_REG_WORKERS), 1);
	CHECK_EQ_INT(R(&d, IPU_REG_MAX_STREAMS), IPU_MAX_STREAMS);
	CHECK_EQ_INT(R(&d, IPU_REG_MAX_RING), IPU_MAX_RING_ENTRIES);
	CHECK_EQ_INT(R(&d, IPU_REG_MAX_SG), IPU_MAX_SG_ENTRIES);
	CHECK_EQ_INT(R(&d, IPU_REG_MAX_IMAGE), IPU_MAX_IMAGE_BYTES);
	CHECK_EQ_INT(R(&d, IPU_REG_NUM_VECTORS), IPU_NUM_VECTORS);
	CHECK(R(&d, IPU_REG_CAPS) & IPU_CAP_MSIX);
	CHECK_EQ_INT(R(&d, IPU_REG_STATUS), IPU_STS_READY);
	CHECK_EQ_INT(R(&d, IPU_REG_STALL_STREAM), UINT32_MAX);
	CHECK_EQ_INT(R(&d, IPU_REG_CNT_RESETS), 1);	/* the machine's reset */
	/* 8-byte access to a 64-bit pair */
	CHECK_EQ_INT(qt_num(&q, "readq 0x%llx\n", (unsigned long long)d.bar0 + IPU_REG_SERIAL_LO),
		     0xabcdef0123ull);
	/* an unknown register reads 0, a misaligned access is ignored */
	CHECK_EQ_INT(R(&d, 0x7fc), 0);
	CHECK_EQ_INT(nop(&d), IPU_ST_OK);
	CHECK(msi_fired(&d, IPU_VEC_CPL));
	CHECK(R(&d, IPU_REG_INT_CAUSE) & IPU_INT_CPL);
	W(&d, IPU_REG_INT_CAUSE, IPU_INT_CPL);
	CHECK_EQ_INT(R(&d, IPU_REG_INT_CAUSE) & IPU_INT_CPL, 0);
	CHECK_EQ_INT(R(&d, IPU_REG_CNT_COMMANDS), 1);
	qt_stop(&q);
}

/* Load over the command ring, run with SG-list streams, compare with the
 * in-process engine; three batches back to back. */
TEST(load_run_matches_engine)
{
	struct fixture f;
	struct sring sin, sout;
	struct ipu_cpl c;
	float in[1000], out[1000], ref[1000];
	uint64_t out_list;
	int batch;

	REQUIRE(fx_start(&f) == 0);
	struct dev *d = &f.d;

	CHECK_EQ_INT(load_exe(d, f.x.img, f.x.len, &c), IPU_ST_OK);
	CHECK_EQ_INT(c.result, 1);			/* programs */
	CHECK_EQ_INT(c.detail >> 32, 2);		/* streams */
	CHECK(R(d, IPU_REG_STATUS) & IPU_STS_LOADED);
	CHECK_EQ_INT(sring_create(d, &sin, 0), IPU_ST_OK);
	CHECK_EQ_INT(sring_create(d, &sout, 1), IPU_ST_OK);
	msi_fired(d, IPU_VEC_SCPL);
	for (batch = 0; batch < 3; batch++) {
		fill_input(in, 1000, batch);
		queue_io(d, &sin, &sout, in, 1000, 3 + batch, &out_list, 0x500 + 2 * batch);
		run_async(d, 0, 0x900 + batch);
		REQUIRE(wait_cpl(d, &c) == 0);
		CHECK_EQ_INT(c.tag, 0x900 + batch);
		CHECK_EQ_INT(c.status, IPU_ST_OK);
		CHECK_EQ_INT(c.opcode, IPU_CMD_RUN);
		CHECK(c.detail > 0);			/* modelled cycles */
		REQUIRE(wait_scpl(d, &c) == 0);
		CHECK_EQ_INT(c.status, IPU_ST_OK);
		CHECK_EQ_INT(c.queue, 0);
		CHECK_EQ_INT(c.tag, 0x500 + 2 * batch);
		CHECK_EQ_INT(c.result, 4000);
		CHECK_EQ_INT(c.opcode, IPUX_STREAM_H2D);
		REQUIRE(wait_scpl(d, &c) == 0);
		CHECK_EQ_INT(c.status, IPU_ST_OK);
		CHECK_EQ_INT(c.queue, 1);
		CHECK_EQ_INT(c.tag, 0x501 + 2 * batch);
		CHECK_EQ_INT(c.opcode, IPUX_STREAM_D2H);
		read_sg(d, out_list, 4 + batch, out);
		REQUIRE(ref_run(&f.x, in, ref) == 0);
		CHECK(memcmp(out, ref, sizeof(out)) == 0);
		/* and the expected values: z is y with its halves swapped */
		CHECK(out[0] == in[500] * 2 + 1 && out[999] == in[499] * 2 + 1);
	}
	CHECK(msi_fired(d, IPU_VEC_SCPL));
	CHECK_EQ_INT(R(d, IPU_REG_CNT_PROGRAMS), 3);
	CHECK_EQ_INT(R(d, IPU_REG_CNT_STREAM_IN), 12000);
	CHECK_EQ_INT(R(d, IPU_REG_CNT_STREAM_OUT), 12000);
	CHECK_EQ_INT(R(d, IPU_REG_CNT_DESCS), 6);
	CHECK(R(d, IPU_REG_CNT_CYCLES) > 0);
	CHECK_EQ_INT(R(d, IPU_REG_CNT_ERRORS), 0);
	CHECK_EQ_INT(R(d, IPU_REG_STATUS) & IPU_STS_ERROR, 0);
	fx_stop(&f);
}

/* Direct buffers, WRITE_TENSOR/READ_TENSOR, a stream that stalls until the
 * doorbell, and a D2H buffer larger than the stream's buffer. */
TEST(direct_buffers_tensors_and_stall)
{
	struct fixture f;
	struct sring sin, sout;
	struct ipu_cpl c;
	struct ipu_cmd k;
	float in[1000], out[1000], ref[1000];
	uint8_t pat[256], back[256];
	struct ipu_stream_desc di = { 0 }, dout = { 0 };
	uint64_t ibuf, obuf, tbuf;
	int i;

	REQUIRE(fx_start(&f) == 0);
	struct dev *d = &f.d;

	REQUIRE(load_exe(d, f.x.img, f.x.len, &c) == IPU_ST_OK);
	REQUIRE(sring_create(d, &sin, 0) == IPU_ST_OK);
	REQUIRE(sring_create(d, &sout, 1) == IPU_ST_OK);

	/* tensor write + read back (before the run overwrites x on tile 1) */
	for (i = 0; i < 256; i++)
		pat[i] = (uint8_t)(i * 7 + 1);
	tbuf = dev_alloc(d, 256, 64);
	mem_write(d->q, tbuf, pat, 256);
	k = (struct ipu_cmd){ .opcode = IPU_CMD_WRITE_TENSOR, .flags = IPU_F_DIRECT, .arg0 = 1,
			      .arg1 = 256, .addr = tbuf, .len = 256 };
	CHECK_EQ_INT(cmd(d, &k, NULL), IPU_ST_OK);
	tbuf = dev_alloc(d, 256, 64);
	k = (struct ipu_cmd){ .opcode = IPU_CMD_READ_TENSOR, .arg0 = 1, .arg1 = 256,
			      .addr = make_sg(d, NULL, 256, 2), .sg_count = 2, .len = 256 };
	CHECK_EQ_INT(cmd(d, &k, NULL), IPU_ST_OK);
	read_sg(d, k.addr, 2, back);
	CHECK(memcmp(pat, back, 256) == 0);

	/* RUN first: the program stalls on stream 0 */
	fill_input(in, 1000, 7);
	run_async(d, 0, 0x77);
	CHECK(wait_status(d, IPU_STS_STALLED, IPU_STS_STALLED) == 0);
	CHECK_EQ_INT(R(d, IPU_REG_STALL_STREAM), 0);
	CHECK_EQ_INT(R(d, IPU_REG_PROGRAM), 0);
	CHECK(R(d, IPU_REG_STATUS) & IPU_STS_BUSY);
	ibuf = dev_alloc(d, 4000, 4096);
	obuf = dev_alloc(d, 8192, 4096);
	mem_write(d->q, ibuf, in, 4000);
	di = (struct ipu_stream_desc){ .addr = ibuf, .len = 4000, .tag = 1, .flags = IPU_F_DIRECT };
	sring_push(d, &sin, &di);
	/* now it stalls on the output */
	CHECK(wait_status(d, IPU_STS_STALLED, IPU_STS_STALLED) == 0);
	{
		long long t0 = now_ms();

		while (R(d, IPU_REG_STALL_STREAM) != 1 && now_ms() - t0 < TIMEOUT_MS)
			msleep(1);
	}
	CHECK_EQ_INT(R(d, IPU_REG_STALL_STREAM), 1);
	dout = (struct ipu_stream_desc){ .addr = obuf, .len = 8192, .tag = 2, .flags = IPU_F_DIRECT };
	sring_push(d, &sout, &dout);
	REQUIRE(wait_cpl(d, &c) == 0);
	CHECK_EQ_INT(c.status, IPU_ST_OK);
	CHECK_EQ_INT(c.tag, 0x77);
	REQUIRE(wait_scpl(d, &c) == 0);
	CHECK_EQ_INT(c.tag, 1);
	REQUIRE(wait_scpl(d, &c) == 0);
	CHECK_EQ_INT(c.tag, 2);
	CHECK_EQ_INT(c.status, IPU_ST_OK);
	CHECK_EQ_INT(c.result, 4000);		/* bytes written into the 8 KiB buffer */
	mem_read(d->q, obuf, out, 4000);
	REQUIRE(ref_run(&f.x, in, ref) == 0);
	CHECK(memcmp(out, ref, 4000) == 0);
	CHECK_EQ_INT(R(d, IPU_REG_CNT_STALLS), 2);
	CHECK_EQ_INT(R(d, IPU_REG_STATUS) & (IPU_STS_STALLED | IPU_STS_BUSY), 0);
	fx_stop(&f);
}

/* A corrupt image is refused with the verifier's code; QEMU stays alive. */
TEST(malformed_executable)
{
	struct fixture f;
	struct ipu_cpl c;
	uint8_t *bad;

	REQUIRE(fx_start(&f) == 0);
	struct dev *d = &f.d;

	bad = malloc(f.x.len);
	memcpy(bad, f.x.img, f.x.len);
	bad[f.x.len - 5] ^= 0x40;			/* payload byte: checksum */
	msi_fired(d, IPU_VEC_ERROR);
	CHECK_EQ_INT(load_exe(d, bad, f.x.len, &c), IPU_ST_EXE_INVALID);
	CHECK_EQ_INT((int32_t)c.result, IPUX_E_CHECKSUM);
	CHECK_EQ_INT(R(d, IPU_REG_ERR_CODE), IPU_ST_EXE_INVALID);
	CHECK_EQ_INT((int32_t)R(d, IPU_REG_ERR_DETAIL), IPUX_E_CHECKSUM);
	CHECK(R(d, IPU_REG_STATUS) & IPU_STS_ERROR);
	CHECK(msi_fired(d, IPU_VEC_ERROR));
	CHECK(R(d, IPU_REG_INT_CAUSE) & IPU_INT_ERROR);
	W(d, IPU_REG_ERR_CODE, 0);
	CHECK_EQ_INT(R(d, IPU_REG_STATUS) & IPU_STS_ERROR, 0);
	CHECK_EQ_INT(R(d, IPU_REG_STATUS) & IPU_STS_LOADED, 0);

	memcpy(bad, f.x.img, f.x.len);
	bad[0] ^= 1;					/* magic */
	CHECK_EQ_INT(load_exe(d, bad, f.x.len, &c), IPU_ST_EXE_INVALID);
	CHECK_EQ_INT((int32_t)c.result, IPUX_E_BAD_MAGIC);
	/* shorter than its header says */
	CHECK_EQ_INT(load_exe(d, f.x.img, f.x.len - 64, &c), IPU_ST_EXE_INVALID);
	CHECK_EQ_INT((int32_t)c.result, IPUX_E_TRUNCATED);
	/* too big for this device: built for 16 tiles, device has 16 -> ok;
	 * a RUN without a loaded executable */
	{
		struct ipu_cmd k = { .opcode = IPU_CMD_RUN };

		CHECK_EQ_INT(cmd(d, &k, &c), IPU_ST_NOT_LOADED);
	}
	/* still alive and usable */
	CHECK_EQ_INT(nop(d), IPU_ST_OK);
	CHECK_EQ_INT(load_exe(d, f.x.img, f.x.len, &c), IPU_ST_OK);
	{
		struct ipu_cmd k = { .opcode = IPU_CMD_RUN, .arg0 = 5 };

		CHECK_EQ_INT(cmd(d, &k, &c), IPU_ST_BAD_PROGRAM);
	}
	CHECK(R(d, IPU_REG_CNT_ERRORS) >= 5);
	free(bad);
	fx_stop(&f);
}

/* Submit one command, expect `status` (and ERR_DETAIL if detail >= 0). */
static void expect_refused(struct dev *d, struct ipu_cmd *k, int status, long long detail,
			   const char *what)
{
	struct ipu_cpl c;
	int st;

	W(d, IPU_REG_ERR_CODE, 0);
	st = cmd(d, k, &c);
	CHECK_MSG(st == status, "%s: status %d, expected %d", what, st, status);
	CHECK_MSG(R(d, IPU_REG_ERR_CODE) == (uint32_t)status, "%s: ERR_CODE %u", what,
		  R(d, IPU_REG_ERR_CODE));
	if (detail >= 0)
		CHECK_MSG(R(d, IPU_REG_ERR_DETAIL) == (uint32_t)detail, "%s: ERR_DETAIL %u, expected %lld",
			  what, R(d, IPU_REG_ERR_DETAIL), detail);
	CHECK_MSG(nop(d) == IPU_ST_OK, "%s: NOP after it", what);
}

TEST(malformed_commands)
{
	struct fixture f;
	struct ipu_cmd k;
	struct ipu_sg sg[3];
	uint64_t list, buf;

	REQUIRE(fx_start(&f) == 0);
	struct dev *d = &f.d;

	buf = dev_alloc(d, 8192, 4096);
	mem_write(d->q, buf, f.x.img, f.x.len < 8192 ? f.x.len : 8192);
	list = dev_alloc(d, 4096, 64);

	k = (struct ipu_cmd){ .opcode = 0x7f };
	expect_refused(d, &k, IPU_ST_INVALID_OPCODE, -1, "opcode");
	k = (struct ipu_cmd){ .opcode = IPU_CMD_NOP, .rsvd1[3] = 1 };
	expect_refused(d, &k, IPU_ST_INVALID_FIELD, -1, "reserved");
	k = (struct ipu_cmd){ .opcode = IPU_CMD_RUN, .flags = 0x80 };
	expect_refused(d, &k, IPU_ST_INVALID_FIELD, -1, "flags");
	k = (struct ipu_cmd){ .opcode = IPU_CMD_LOAD_EXE, .addr = list + 8, .sg_count = 1, .len = 64 };
	expect_refused(d, &k, IPU_ST_BAD_SG, IPU_SGE_ALIGN, "sg align");
	k = (struct ipu_cmd){ .opcode = IPU_CMD_LOAD_EXE, .addr = list, .sg_count = 0, .len = 64 };
	expect_refused(d, &k, IPU_ST_BAD_SG, IPU_SGE_COUNT, "sg count 0");
	k = (struct ipu_cmd){ .opcode = IPU_CMD_LOAD_EXE, .addr = list, .sg_count = 1u << 30, .len = 64 };
	expect_refused(d, &k, IPU_ST_BAD_SG, IPU_SGE_COUNT, "sg count huge");
	k = (struct ipu_cmd){ .opcode = IPU_CMD_LOAD_EXE, .addr = list, .sg_count = 1, .len = 0xffffffffu };
	expect_refused(d, &k, IPU_ST_TOO_LARGE, -1, "huge image");
	k = (struct ipu_cmd){ .opcode = IPU_CMD_LOAD_EXE, .addr = 0xfff00000000ull, .sg_count = 4, .len = 64 };
	expect_refused(d, &k, IPU_ST_DMA_FAULT, -1, "sg list outside RAM");
	CHECK_EQ_INT(R(d, IPU_REG_ERR_ADDR_HI), 0xfff);
	k = (struct ipu_cmd){ .opcode = IPU_CMD_LOAD_EXE, .addr = (~0ull - 32) & ~15ull, .sg_count = 4, .len = 64 };
	expect_refused(d, &k, IPU_ST_BAD_SG, IPU_SGE_OVERFLOW, "sg list wraps");

	/* entry problems */
	sg[0] = (struct ipu_sg){ buf, 100, 0 };
	sg[1] = (struct ipu_sg){ buf + 100, 0, 0 };
	mem_write(d->q, list, sg, 2 * sizeof(sg[0]));
	k = (struct ipu_cmd){ .opcode = IPU_CMD_LOAD_EXE, .addr = list, .sg_count = 2, .len = 200 };
	expect_refused(d, &k, IPU_ST_BAD_SG, IPU_SGE_ZERO_LEN, "zero-length entry");
	CHECK_EQ_INT(R(d, IPU_REG_ERR_ADDR_LO), (uint32_t)list + 16);
	sg[1] = (struct ipu_sg){ buf + 100, 100, 7 };
	mem_write(d->q, list, sg, 2 * sizeof(sg[0]));
	expect_refused(d, &k, IPU_ST_BAD_SG, IPU_SGE_RESERVED, "entry rsvd");
	sg[1] = (struct ipu_sg){ ~0ull - 10, 100, 0 };
	mem_write(d->q, list, sg, 2 * sizeof(sg[0]));
	expect_refused(d, &k, IPU_ST_BAD_SG, IPU_SGE_OVERFLOW, "entry wraps");
	sg[1] = (struct ipu_sg){ buf + 100, 99, 0 };
	mem_write(d->q, list, sg, 2 * sizeof(sg[0]));
	expect_refused(d, &k, IPU_ST_BAD_SG, IPU_SGE_SUM, "entries short");
	sg[1] = (struct ipu_sg){ buf + 100, 0x7fffffff, 0 };
	mem_write(d->q, list, sg, 2 * sizeof(sg[0]));
	expect_refused(d, &k, IPU_ST_BAD_SG, IPU_SGE_SUM, "entries long");
	sg[1] = (struct ipu_sg){ 0x7ff000000000ull, 100, 0 };
	mem_write(d->q, list, sg, 2 * sizeof(sg[0]));
	expect_refused(d, &k, IPU_ST_DMA_FAULT, -1, "entry outside RAM");
	CHECK_EQ_INT(R(d, IPU_REG_ERR_ADDR_HI), 0x7ff0);
	k = (struct ipu_cmd){ .opcode = IPU_CMD_LOAD_EXE, .flags = IPU_F_DIRECT, .addr = buf,
			      .sg_count = 1, .len = 64 };
	expect_refused(d, &k, IPU_ST_BAD_SG, IPU_SGE_DIRECT, "direct with sg_count");
	k = (struct ipu_cmd){ .opcode = IPU_CMD_LOAD_EXE, .flags = IPU_F_DIRECT,
			      .addr = 0x10000000ull - 32, .len = 64 };
	expect_refused(d, &k, IPU_ST_DMA_FAULT, -1, "direct buffer past the end of RAM");

	/* tensors and streams */
	k = (struct ipu_cmd){ .opcode = IPU_CMD_WRITE_TENSOR, .flags = IPU_F_DIRECT, .arg0 = 16,
			      .addr = buf, .len = 4 };
	expect_refused(d, &k, IPU_ST_RANGE, -1, "tile out of range");
	k = (struct ipu_cmd){ .opcode = IPU_CMD_WRITE_TENSOR, .flags = IPU_F_DIRECT, .arg0 = 1,
			      .arg1 = 65532, .addr = buf, .len = 8 };
	expect_refused(d, &k, IPU_ST_RANGE, -1, "offset + len past tile memory");
	k = (struct ipu_cmd){ .opcode = IPU_CMD_READ_TENSOR, .flags = IPU_F_DIRECT, .arg0 = 1,
			      .addr = buf, .len = 0x80000000u };
	expect_refused(d, &k, IPU_ST_RANGE, -1, "huge read");
	k = (struct ipu_cmd){ .opcode = IPU_CMD_CREATE_STREAM, .arg0 = 5000, .addr = list, .len = 16 };
	expect_refused(d, &k, IPU_ST_BAD_STREAM, 5000, "stream id");
	k = (struct ipu_cmd){ .opcode = IPU_CMD_CREATE_STREAM, .arg0 = 3, .addr = list + 32, .len = 16 };
	expect_refused(d, &k, IPU_ST_RING_CONFIG, -1, "stream ring misaligned");
	k = (struct ipu_cmd){ .opcode = IPU_CMD_CREATE_STREAM, .arg0 = 3, .addr = list, .len = 12 };
	expect_refused(d, &k, IPU_ST_RING_CONFIG, -1, "stream ring size");
	k = (struct ipu_cmd){ .opcode = IPU_CMD_CREATE_STREAM, .arg0 = 3, .addr = 0x7ff000000000ull,
			      .len = 16 };
	expect_refused(d, &k, IPU_ST_RING_CONFIG, -1, "stream ring outside RAM");
	k = (struct ipu_cmd){ .opcode = IPU_CMD_DELETE_STREAM, .arg0 = 3 };
	expect_refused(d, &k, IPU_ST_BAD_STREAM, -1, "delete missing stream");
	k = (struct ipu_cmd){ .opcode = IPU_CMD_CREATE_STREAM, .arg0 = 3, .addr = list, .len = 16 };
	CHECK_EQ_INT(cmd(d, &k, NULL), IPU_ST_OK);
	expect_refused(d, &k, IPU_ST_BAD_STREAM, -1, "stream exists");
	k = (struct ipu_cmd){ .opcode = IPU_CMD_DELETE_STREAM, .arg0 = 3 };
	CHECK_EQ_INT(cmd(d, &k, NULL), IPU_ST_OK);
	CHECK(R(d, IPU_REG_CNT_ERRORS) >= 20);
	CHECK_EQ_INT(R(d, IPU_REG_STATUS) & IPU_STS_FATAL, 0);
	fx_stop(&f);
}

/* Doorbells out of range, wrapped rings, bad ring configuration. */
TEST(ring_indices_and_wrap)
{
	struct fixture f;
	struct ipu_cpl c;
	int i, ok = 1;

	REQUIRE(fx_start(&f) == 0);
	struct dev *d = &f.d;

	/* a tail beyond the ring: refused, nothing runs */
	W(d, IPU_REG_CMDQ_TAIL, CMDQ_N);
	CHECK_EQ_INT(R(d, IPU_REG_ERR_CODE), IPU_ST_RING_INDEX);
	CHECK_EQ_INT(R(d, IPU_REG_ERR_DETAIL), IPU_RING_CMDQ);
	CHECK_EQ_INT(R(d, IPU_REG_ERR_ADDR_LO), CMDQ_N);
	W(d, IPU_REG_CMDQ_TAIL, 0xffffffffu);
	CHECK(no_cpl(d, 100));
	W(d, IPU_REG_CPLQ_HEAD, 1000);
	CHECK_EQ_INT(R(d, IPU_REG_ERR_DETAIL), IPU_RING_CPLQ);
	W(d, IPU_REG_SCQ_HEAD, SCQ_N + 1);
	CHECK_EQ_INT(R(d, IPU_REG_ERR_DETAIL), IPU_RING_SCQ);
	/* a doorbell of a stream that has no ring */
	W(d, IPU_REG_STREAM_DB(9), 1);
	CHECK_EQ_INT(R(d, IPU_REG_ERR_CODE), IPU_ST_BAD_STREAM);
	CHECK_EQ_INT(R(d, IPU_REG_ERR_ADDR_HI), 9);
	W(d, IPU_REG_ERR_CODE, 0);
	CHECK_EQ_INT(nop(d), IPU_ST_OK);

	/* wrap the command and completion rings three times */
	for (i = 0; i < 3 * CMDQ_N + 5; i++)
		ok &= nop(d) == IPU_ST_OK;
	CHECK(ok);
	CHECK_EQ_INT(R(d, IPU_REG_CMDQ_HEAD), d->cmd_tail);
	CHECK_EQ_INT(R(d, IPU_REG_CPLQ_TAIL), d->cpl_head);
	/* a batch of 40 at once */
	for (i = 0; i < 40; i++) {
		struct ipu_cmd k = { .opcode = IPU_CMD_NOP, .tag = 0x7000 + (uint64_t)i };

		mem_write(d->q, d->cmdq + (uint64_t)d->cmd_tail * 64, &k, 64);
		d->cmd_tail = (d->cmd_tail + 1) % CMDQ_N;
	}
	W(d, IPU_REG_CMDQ_TAIL, d->cmd_tail);
	for (i = 0; i < 40; i++) {
		REQUIRE(wait_cpl(d, &c) == 0);
		ok &= c.tag == 0x7000 + (uint64_t)i && c.status == 0 && c.head == (d->cpl_head + 0u) % CMDQ_N;
	}
	CHECK(ok);
	CHECK_EQ_INT(R(d, IPU_REG_ERR_CODE), 0);

	/* bad ring configuration: ENABLE refused with the ring named */
	W(d, IPU_REG_CONTROL, IPU_CTRL_RESET);
	CHECK(wait_status(d, IPU_STS_RESETTING, 0) == 0);
	CHECK_EQ_INT(R(d, IPU_REG_STATUS), 0);
	CHECK_EQ_INT(R(d, IPU_REG_CMDQ_SIZE), 0);
	W(d, IPU_REG_CMDQ_BASE_LO, (uint32_t)d->cmdq);
	W(d, IPU_REG_CMDQ_SIZE, 48);			/* not a power of two */
	W(d, IPU_REG_CPLQ_BASE_LO, (uint32_t)d->cplq);
	W(d, IPU_REG_CPLQ_SIZE, CPLQ_N);
	W(d, IPU_REG_SCQ_BASE_LO, (uint32_t)d->scq);
	W(d, IPU_REG_SCQ_SIZE, SCQ_N);
	W(d, IPU_REG_CONTROL, IPU_CTRL_ENABLE);
	CHECK_EQ_INT(R(d, IPU_REG_STATUS) & IPU_STS_READY, 0);
	CHECK_EQ_INT(R(d, IPU_REG_ERR_CODE), IPU_ST_RING_CONFIG);
	CHECK_EQ_INT(R(d, IPU_REG_ERR_DETAIL), IPU_RING_CMDQ);
	CHECK_EQ_INT(R(d, IPU_REG_CONTROL), 0);
	W(d, IPU_REG_CMDQ_SIZE, CMDQ_N);
	W(d, IPU_REG_CPLQ_BASE_HI, 0x100);		/* outside RAM */
	W(d, IPU_REG_CONTROL, IPU_CTRL_ENABLE);
	CHECK_EQ_INT(R(d, IPU_REG_ERR_DETAIL), IPU_RING_CPLQ);
	W(d, IPU_REG_CPLQ_BASE_HI, 0);
	W(d, IPU_REG_SCQ_BASE_LO, (uint32_t)d->scq + 8);	/* misaligned */
	W(d, IPU_REG_CONTROL, IPU_CTRL_ENABLE);
	CHECK_EQ_INT(R(d, IPU_REG_ERR_DETAIL), IPU_RING_SCQ);
	CHECK(qt_alive(d->q));
	/* and a good configuration works again */
	CHECK(dev_enable(d) == 0);
	CHECK_EQ_INT(nop(d), IPU_ST_OK);
	fx_stop(&f);
}

struct bad_desc {
	struct ipu_stream_desc d;
	int status;
	long long detail;
	const char *what;
};

/* Bad stream descriptors fail the program with their codes. */
TEST(malformed_stream_descriptors)
{
	struct fixture f;
	struct sring sin, sout;
	struct ipu_cpl c;
	float in[1000], out[1000], ref[1000];
	uint64_t out_list;
	struct bad_desc cases[6];
	uint64_t buf, list;
	int i, n = 0;

	REQUIRE(fx_start(&f) == 0);
	struct dev *d = &f.d;

	REQUIRE(load_exe(d, f.x.img, f.x.len, &c) == IPU_ST_OK);
	REQUIRE(sring_create(d, &sin, 0) == IPU_ST_OK);
	REQUIRE(sring_create(d, &sout, 1) == IPU_ST_OK);
	buf = dev_alloc(d, 8192, 4096);
	list = dev_alloc(d, 64, 64);
	{
		struct ipu_sg sg[2] = { { buf, 2000, 0 }, { buf + 2000, 1000, 0 } };

		mem_write(d->q, list, sg, sizeof(sg));
	}
	cases[n++] = (struct bad_desc){ { buf, 3999, 0, 0x51, IPU_F_DIRECT, 0 }, IPU_ST_LENGTH, 4000, "short" };
	cases[n++] = (struct bad_desc){ { buf, 0xfffffff0u, 0, 0x52, IPU_F_DIRECT, 0 }, IPU_ST_LENGTH, 4000, "huge" };
	cases[n++] = (struct bad_desc){ { list, 4000, 2, 0x53, 0, 0 }, IPU_ST_BAD_SG, IPU_SGE_SUM, "sg sum" };
	cases[n++] = (struct bad_desc){ { list + 4, 4000, 2, 0x54, 0, 0 }, IPU_ST_BAD_SG, IPU_SGE_ALIGN, "sg align" };
	cases[n++] = (struct bad_desc){ { buf, 4000, 0, 0x55, IPU_F_DIRECT, 1 }, IPU_ST_INVALID_FIELD, -1, "rsvd" };
	cases[n++] = (struct bad_desc){ { 0x7ff000000000ull, 4000, 0, 0x56, IPU_F_DIRECT, 0 }, IPU_ST_DMA_FAULT, -1, "outside RAM" };
	for (i = 0; i < n; i++) {
		W(d, IPU_REG_ERR_CODE, 0);
		msi_fired(d, IPU_VEC_ERROR);
		sring_push(d, &sin, &cases[i].d);
		run_async(d, 0, 0xa0 + (uint64_t)i);
		REQUIRE(wait_scpl(d, &c) == 0);
		CHECK_MSG(c.status == cases[i].status, "%s: stream status %u", cases[i].what, c.status);
		CHECK_EQ_INT(c.tag, cases[i].d.tag);
		if (cases[i].detail >= 0)
			CHECK_MSG(c.result == cases[i].detail, "%s: result %u", cases[i].what, c.result);
		REQUIRE(wait_cpl(d, &c) == 0);
		CHECK_MSG(c.status == IPU_ST_STREAM_ERROR, "%s: run status %u", cases[i].what, c.status);
		CHECK_EQ_INT(R(d, IPU_REG_ERR_CODE), IPU_ST_STREAM_ERROR);
		CHECK(msi_fired(d, IPU_VEC_ERROR));
	}
	/* the device still runs a good batch */
	fill_input(in, 1000, 3);
	queue_io(d, &sin, &sout, in, 1000, 2, &out_list, 0x600);
	run_async(d, 0, 0x601);
	REQUIRE(wait_cpl(d, &c) == 0);
	CHECK_EQ_INT(c.status, IPU_ST_OK);
	REQUIRE(wait_scpl(d, &c) == 0);
	REQUIRE(wait_scpl(d, &c) == 0);
	read_sg(d, out_list, 3, out);
	REQUIRE(ref_run(&f.x, in, ref) == 0);
	CHECK(memcmp(out, ref, sizeof(out)) == 0);
	fx_stop(&f);
}

/* ABORT while a program waits on a stream: the run, the commands queued
 * behind it and the queued stream buffers all come back ABORTED. */
TEST(abort_while_waiting_on_stream)
{
	struct fixture f;
	struct sring sin, sout;
	struct ipu_cpl c;
	struct ipu_cmd k;
	struct ipu_stream_desc dout = { 0 };
	float in[1000], out[1000], ref[1000];
	uint64_t out_list;
	int i, seen_out = 0;

	REQUIRE(fx_start(&f) == 0);
	struct dev *d = &f.d;

	REQUIRE(load_exe(d, f.x.img, f.x.len, &c) == IPU_ST_OK);
	REQUIRE(sring_create(d, &sin, 0) == IPU_ST_OK);
	REQUIRE(sring_create(d, &sout, 1) == IPU_ST_OK);
	dout.addr = dev_alloc(d, 4000, 64);
	dout.len = 4000;
	dout.flags = IPU_F_DIRECT;
	for (i = 0; i < 3; i++) {
		dout.tag = 0xd0 + (uint64_t)i;
		sring_push(d, &sout, &dout);
	}
	run_async(d, 0, 0xc1);
	k = (struct ipu_cmd){ .opcode = IPU_CMD_NOP, .tag = 0xc2 };
	submit(d, &k);
	CHECK(wait_status(d, IPU_STS_STALLED, IPU_STS_STALLED) == 0);
	CHECK(no_cpl(d, 50));
	k = (struct ipu_cmd){ .opcode = IPU_CMD_ABORT, .tag = 0xc3 };
	submit(d, &k);
	REQUIRE(wait_cpl(d, &c) == 0);
	CHECK_EQ_INT(c.tag, 0xc1);
	CHECK_EQ_INT(c.status, IPU_ST_ABORTED);
	REQUIRE(wait_cpl(d, &c) == 0);
	CHECK_EQ_INT(c.tag, 0xc2);
	CHECK_EQ_INT(c.status, IPU_ST_ABORTED);
	REQUIRE(wait_cpl(d, &c) == 0);
	CHECK_EQ_INT(c.tag, 0xc3);
	CHECK_EQ_INT(c.status, IPU_ST_OK);
	for (i = 0; i < 3; i++) {
		REQUIRE(wait_scpl(d, &c) == 0);
		CHECK_EQ_INT(c.status, IPU_ST_ABORTED);
		CHECK_EQ_INT(c.queue, 1);
		seen_out += c.tag == 0xd0 + (uint64_t)i;
	}
	CHECK_EQ_INT(seen_out, 3);
	CHECK_EQ_INT(R(d, IPU_REG_STATUS) & (IPU_STS_STALLED | IPU_STS_BUSY | IPU_STS_ERROR), 0);
	CHECK(R(d, IPU_REG_STATUS) & IPU_STS_LOADED);
	/* the next run is normal */
	fill_input(in, 1000, 5);
	queue_io(d, &sin, &sout, in, 1000, 2, &out_list, 0x700);
	run_async(d, 0, 0x702);
	REQUIRE(wait_cpl(d, &c) == 0);
	CHECK_EQ_INT(c.status, IPU_ST_OK);
	REQUIRE(wait_scpl(d, &c) == 0);
	REQUIRE(wait_scpl(d, &c) == 0);
	read_sg(d, out_list, 3, out);
	REQUIRE(ref_run(&f.x, in, ref) == 0);
	CHECK(memcmp(out, ref, sizeof(out)) == 0);
	/* RESET_ENGINE unloads */
	k = (struct ipu_cmd){ .opcode = IPU_CMD_RESET_ENGINE };
	CHECK_EQ_INT(cmd(d, &k, NULL), IPU_ST_OK);
	CHECK_EQ_INT(R(d, IPU_REG_STATUS) & IPU_STS_LOADED, 0);
	k = (struct ipu_cmd){ .opcode = IPU_CMD_RUN };
	CHECK_EQ_INT(cmd(d, &k, NULL), IPU_ST_NOT_LOADED);
	fx_stop(&f);
}

/* Device reset (CONTROL.RESET) while a program waits on a stream. */
TEST(reset_while_waiting_on_stream)
{
	struct fixture f;
	struct sring sin, sout;
	struct ipu_cpl c;
	float in[1000], out[1000], ref[1000];
	uint64_t out_list;
	int round;

	REQUIRE(fx_start(&f) == 0);
	struct dev *d = &f.d;

	for (round = 0; round < 2; round++) {
		REQUIRE(load_exe(d, f.x.img, f.x.len, &c) == IPU_ST_OK);
		REQUIRE(sring_create(d, &sin, 0) == IPU_ST_OK);
		REQUIRE(sring_create(d, &sout, 1) == IPU_ST_OK);
		run_async(d, 0, 0xe1);
		CHECK(wait_status(d, IPU_STS_STALLED, IPU_STS_STALLED) == 0);
		CHECK_EQ_INT(R(d, IPU_REG_STALL_STREAM), 0);
		if (round == 0)
			W(d, IPU_REG_CONTROL, IPU_CTRL_RESET);
		else
			W(d, IPU_REG_CONTROL, 0);	/* ENABLE 1 -> 0 resets too */
		CHECK(wait_status(d, IPU_STS_RESETTING, 0) == 0);
		CHECK_EQ_INT(R(d, IPU_REG_STATUS), 0);	/* idle: not ready, nothing loaded */
		CHECK_EQ_INT(R(d, IPU_REG_STALL_STREAM), UINT32_MAX);
		CHECK_EQ_INT(R(d, IPU_REG_CNT_RESETS), 2 + round);
		CHECK_EQ_INT(R(d, IPU_REG_CNT_PROGRAMS), 0);
		CHECK_EQ_INT(R(d, IPU_REG_CPLQ_TAIL), 0);
		/* no completion was posted for the killed run */
		CHECK(dev_enable(d) == 0);
		CHECK(no_cpl(d, 50));
		CHECK_EQ_INT(nop(d), IPU_ST_OK);
		{
			struct ipu_cmd k = { .opcode = IPU_CMD_RUN };

			CHECK_EQ_INT(cmd(d, &k, NULL), IPU_ST_NOT_LOADED);
		}
	}
	/* and works normally afterwards */
	REQUIRE(load_exe(d, f.x.img, f.x.len, &c) == IPU_ST_OK);
	REQUIRE(sring_create(d, &sin, 0) == IPU_ST_OK);
	REQUIRE(sring_create(d, &sout, 1) == IPU_ST_OK);
	fill_input(in, 1000, 9);
	queue_io(d, &sin, &sout, in, 1000, 2, &out_list, 0x800);
	run_async(d, 0, 0x802);
	REQUIRE(wait_cpl(d, &c) == 0);
	CHECK_EQ_INT(c.status, IPU_ST_OK);
	REQUIRE(wait_scpl(d, &c) == 0);
	REQUIRE(wait_scpl(d, &c) == 0);
	read_sg(d, out_list, 3, out);
	REQUIRE(ref_run(&f.x, in, ref) == 0);
	CHECK(memcmp(out, ref, sizeof(out)) == 0);
	/* reset from the middle of a LOAD too, then a system-wide check */
	CHECK(qt_alive(d->q));
	fx_stop(&f);
}

/*
 * A function-level reset (DEVCTL.BCR_FLR) while a run waits for a stream
 * buffer: QEMU's reset phases run inside the config write, and the hold
 * phase waits for the executor to drop the run, so by the time the write
 * returns the device is idle (no RESETTING to wait for) and posts nothing
 * for the killed run; then it is set up again (the FLR cleared BARs,
 * command register and MSI-X) and runs with the engine's results.
 */
TEST(flr_while_waiting_on_stream)
{
	struct fixture f;
	struct sring sin, sout;
	struct ipu_cpl c;
	float in[1000], out[1000], ref[1000];
	uint64_t out_list;
	uint32_t resets;
	int cap;

	REQUIRE(fx_start(&f) == 0);
	struct dev *d = &f.d;

	REQUIRE(load_exe(d, f.x.img, f.x.len, &c) == IPU_ST_OK);
	REQUIRE(sring_create(d, &sin, 0) == IPU_ST_OK);
	REQUIRE(sring_create(d, &sout, 1) == IPU_ST_OK);
	run_async(d, 0, 0xf1);
	CHECK(wait_status(d, IPU_STS_STALLED, IPU_STS_STALLED) == 0);
	cap = find_cap(d->q, d->slot, 0x10);	/* PCI Express */
	REQUIRE(cap != 0);
	CHECK(cfg_read32(d->q, d->slot, cap + 4) & (1u << 28));	/* DEVCAP.FLR */
	resets = R(d, IPU_REG_CNT_RESETS);
	cfg_write16(d->q, d->slot, cap + 8, 0x8000);	/* DEVCTL.BCR_FLR */
	cfg_write32(d->q, d->slot, 0x10, (uint32_t)d->bar0);
	cfg_write16(d->q, d->slot, 0x04, 0x6);
	CHECK_EQ_INT(R(d, IPU_REG_STATUS), 0);	/* quiesced already: idle, nothing loaded */
	CHECK_EQ_INT(R(d, IPU_REG_CNT_RESETS), resets + 1);
	CHECK_EQ_INT(R(d, IPU_REG_STALL_STREAM), UINT32_MAX);
	CHECK(no_cpl(d, 50));
	/* set up again from scratch, as a driver's reset_done does */
	REQUIRE(dev_setup(d, &f.q, 4, 0) == 0);
	REQUIRE(load_exe(d, f.x.img, f.x.len, &c) == IPU_ST_OK);
	REQUIRE(sring_create(d, &sin, 0) == IPU_ST_OK);
	REQUIRE(sring_create(d, &sout, 1) == IPU_ST_OK);
	fill_input(in, 1000, 11);
	queue_io(d, &sin, &sout, in, 1000, 2, &out_list, 0x900);
	run_async(d, 0, 0x902);
	REQUIRE(wait_cpl(d, &c) == 0);
	CHECK_EQ_INT(c.status, IPU_ST_OK);
	REQUIRE(wait_scpl(d, &c) == 0);
	REQUIRE(wait_scpl(d, &c) == 0);
	read_sg(d, out_list, 3, out);
	REQUIRE(ref_run(&f.x, in, ref) == 0);
	CHECK(memcmp(out, ref, sizeof(out)) == 0);
	CHECK(qt_alive(d->q));
	fx_stop(&f);
}

/* Two devices in one VM, both running at once. */
TEST(two_devices)
{
	const char *devs[] = { DEV_ARGS("4", "0x1111"), DEV_ARGS("5", "0x2222"), NULL };
	struct qt q;
	struct dev d[2];
	struct sring sin[2], sout[2];
	struct exe x;
	struct ipu_cpl c;
	float in[2][1000], out[2][1000], ref[1000];
	uint64_t out_list[2];
	int i;

	REQUIRE(build_affine(&x, 1000, 4) == 0);
	REQUIRE(qt_start(&q, devs) == 0);
	REQUIRE(dev_setup(&d[0], &q, 4, 0) == 0);
	REQUIRE(dev_setup(&d[1], &q, 5, 1) == 0);
	CHECK_EQ_INT(R(&d[0], IPU_REG_SERIAL_LO), 0x1111);
	CHECK_EQ_INT(R(&d[1], IPU_REG_SERIAL_LO), 0x2222);
	for (i = 0; i < 2; i++) {
		REQUIRE(load_exe(&d[i], x.img, x.len, &c) == IPU_ST_OK);
		REQUIRE(sring_create(&d[i], &sin[i], 0) == IPU_ST_OK);
		REQUIRE(sring_create(&d[i], &sout[i], 1) == IPU_ST_OK);
		msi_fired(&d[i], IPU_VEC_CPL);
		msi_fired(&d[i], IPU_VEC_SCPL);
	}
	/* both programs start and wait for their inputs */
	run_async(&d[0], 0, 0xaa0);
	run_async(&d[1], 0, 0xaa1);
	CHECK(wait_status(&d[0], IPU_STS_STALLED, IPU_STS_STALLED) == 0);
	CHECK(wait_status(&d[1], IPU_STS_STALLED, IPU_STS_STALLED) == 0);
	for (i = 0; i < 2; i++) {
		fill_input(in[i], 1000, 20 + i);
		queue_io(&d[i], &sin[i], &sout[i], in[i], 1000, 2 + i, &out_list[i], 0xb00);
	}
	for (i = 0; i < 2; i++) {
		REQUIRE(wait_cpl(&d[i], &c) == 0);
		CHECK_EQ_INT(c.status, IPU_ST_OK);
		CHECK_EQ_INT(c.tag, 0xaa0 + (uint64_t)i);
		REQUIRE(wait_scpl(&d[i], &c) == 0);
		REQUIRE(wait_scpl(&d[i], &c) == 0);
		read_sg(&d[i], out_list[i], 3 + i, out[i]);
		REQUIRE(ref_run(&x, in[i], ref) == 0);
		CHECK(memcmp(out[i], ref, sizeof(ref)) == 0);
		CHECK(msi_fired(&d[i], IPU_VEC_CPL));
		CHECK(msi_fired(&d[i], IPU_VEC_SCPL));
		CHECK_EQ_INT(R(&d[i], IPU_REG_CNT_PROGRAMS), 1);
	}
	CHECK(memcmp(out[0], out[1], sizeof(ref)) != 0);
	/* resetting one leaves the other alone */
	W(&d[0], IPU_REG_CONTROL, IPU_CTRL_RESET);
	CHECK(wait_status(&d[0], IPU_STS_RESETTING, 0) == 0);
	CHECK(R(&d[1], IPU_REG_STATUS) & IPU_STS_LOADED);
	CHECK_EQ_INT(nop(&d[1]), IPU_ST_OK);
	qt_stop(&q);
	free(x.img);
}

/* Interrupt masking and INT_CAUSE. */
TEST(interrupt_mask)
{
	struct fixture f;

	REQUIRE(fx_start(&f) == 0);
	struct dev *d = &f.d;

	msi_fired(d, IPU_VEC_CPL);
	W(d, IPU_REG_INT_CAUSE, IPU_INT_ALL);
	W(d, IPU_REG_INT_MASK, IPU_INT_CPL);
	CHECK_EQ_INT(nop(d), IPU_ST_OK);
	msleep(20);
	CHECK(!msi_fired(d, IPU_VEC_CPL));
	CHECK(R(d, IPU_REG_INT_CAUSE) & IPU_INT_CPL);	/* latched while masked */
	W(d, IPU_REG_INT_MASK, 0);			/* unmasking delivers it */
	{
		long long t0 = now_ms();
		int got = 0;

		while (!got && now_ms() - t0 < 2000)
			got = msi_fired(d, IPU_VEC_CPL);
		CHECK(got);
	}
	CHECK_EQ_INT(R(d, IPU_REG_INT_MASK), 0);
	fx_stop(&f);
}

/* The device never overwrites an unconsumed completion: with the
 * completion ring full it waits until the driver frees slots. */
TEST(completion_ring_backpressure)
{
	struct fixture f;
	struct ipu_cpl c;
	int i, ok = 1;

	REQUIRE(fx_start(&f) == 0);
	struct dev *d = &f.d;

	/* 63 NOPs fill the 64-entry completion ring (one slot stays free) */
	for (i = 0; i < CPLQ_N - 1; i++) {
		struct ipu_cmd k = { .opcode = IPU_CMD_NOP, .tag = 0x3000 + (uint64_t)i };

		submit(d, &k);
	}
	{
		long long t0 = now_ms();

		while (R(d, IPU_REG_CPLQ_TAIL) != CPLQ_N - 1 && now_ms() - t0 < TIMEOUT_MS)
			msleep(1);
	}
	CHECK_EQ_INT(R(d, IPU_REG_CPLQ_TAIL), CPLQ_N - 1);
	/* the command ring is drained, so 10 more can be submitted; they wait */
	CHECK_EQ_INT(R(d, IPU_REG_CMDQ_HEAD), CPLQ_N - 1);
	for (i = 0; i < 10; i++) {
		struct ipu_cmd k = { .opcode = IPU_CMD_NOP, .tag = 0x4000 + (uint64_t)i };

		submit(d, &k);
	}
	msleep(50);
	CHECK_EQ_INT(R(d, IPU_REG_CPLQ_TAIL), CPLQ_N - 1);
	CHECK(R(d, IPU_REG_STATUS) & IPU_STS_BUSY);
	/* consuming them lets the rest through, in order, across the wrap */
	for (i = 0; i < CPLQ_N - 1 + 10; i++) {
		REQUIRE(wait_cpl(d, &c) == 0);
		ok &= c.status == IPU_ST_OK &&
		      c.tag == (i < CPLQ_N - 1 ? 0x3000 + (uint64_t)i : 0x4000 + (uint64_t)(i - CPLQ_N + 1));
	}
	CHECK(ok);
	CHECK_EQ_INT(R(d, IPU_REG_CNT_COMMANDS), CPLQ_N - 1 + 10);
	CHECK_EQ_INT(R(d, IPU_REG_ERR_CODE), 0);
	fx_stop(&f);
}

/* A long SG list of tiny pieces, both directions. */
TEST(many_small_sg_pieces)
{
	struct fixture f;
	struct sring sin, sout;
	struct ipu_cpl c;
	float in[1000], out[1000], ref[1000];
	uint64_t out_list;

	REQUIRE(fx_start(&f) == 0);
	struct dev *d = &f.d;

	REQUIRE(load_exe(d, f.x.img, f.x.len, &c) == IPU_ST_OK);
	REQUIRE(sring_create(d, &sin, 0) == IPU_ST_OK);
	REQUIRE(sring_create(d, &sout, 1) == IPU_ST_OK);
	fill_input(in, 1000, 42);
	queue_io(d, &sin, &sout, in, 1000, 999, &out_list, 0x100);	/* 4-byte pieces + rest */
	run_async(d, 0, 0x102);
	REQUIRE(wait_cpl(d, &c) == 0);
	CHECK_EQ_INT(c.status, IPU_ST_OK);
	REQUIRE(wait_scpl(d, &c) == 0);
	CHECK_EQ_INT(c.status, IPU_ST_OK);
	REQUIRE(wait_scpl(d, &c) == 0);
	CHECK_EQ_INT(c.status, IPU_ST_OK);
	read_sg(d, out_list, 1000, out);
	REQUIRE(ref_run(&f.x, in, ref) == 0);
	CHECK(memcmp(out, ref, sizeof(out)) == 0);
	fx_stop(&f);
}

/* Without bus mastering the device refuses its rings and DMA fails. */
TEST(bus_master_off)
{
	struct fixture f;
	struct ipu_cpl c;
	struct ipu_cmd k;

	REQUIRE(fx_start(&f) == 0);
	struct dev *d = &f.d;

	cfg_write16(d->q, d->slot, 0x04, 0x2);		/* memory space only */
	W(d, IPU_REG_CONTROL, IPU_CTRL_RESET);
	CHECK(wait_status(d, IPU_STS_RESETTING, 0) == 0);
	CHECK(dev_enable(d) != 0);
	CHECK_EQ_INT(R(d, IPU_REG_ERR_CODE), IPU_ST_RING_CONFIG);
	CHECK_EQ_INT(R(d, IPU_REG_STATUS) & IPU_STS_READY, 0);
	/* enabled with bus mastering, then switched off under a LOAD */
	cfg_write16(d->q, d->slot, 0x04, 0x6);
	CHECK(dev_enable(d) == 0);
	k = (struct ipu_cmd){ .opcode = IPU_CMD_NOP };
	CHECK_EQ_INT(cmd(d, &k, &c), IPU_ST_OK);
	cfg_write16(d->q, d->slot, 0x04, 0x2);
	k = (struct ipu_cmd){ .opcode = IPU_CMD_NOP };
	submit(d, &k);
	CHECK(wait_status(d, IPU_STS_FATAL, IPU_STS_FATAL) == 0);
	CHECK_EQ_INT(R(d, IPU_REG_ERR_CODE), IPU_ST_DMA_FAULT);
	CHECK_EQ_INT(R(d, IPU_REG_ERR_DETAIL), IPU_RING_CMDQ);
	CHECK(qt_alive(d->q));
	/* a reset recovers */
	cfg_write16(d->q, d->slot, 0x04, 0x6);
	W(d, IPU_REG_CONTROL, IPU_CTRL_RESET);
	CHECK(dev_enable(d) == 0);
	CHECK_EQ_INT(R(d, IPU_REG_STATUS) & IPU_STS_FATAL, 0);
	CHECK_EQ_INT(nop(d), IPU_ST_OK);
	fx_stop(&f);
}

/* Defaults: a GC200-sized device, serial numbers picked per instance. */
TEST(default_properties)
{
	const char *devs[] = { "ipu,addr=4", "ipu,addr=5", NULL };
	struct qt q;
	struct dev d[2];

	REQUIRE(qt_start(&q, devs) == 0);
	REQUIRE(dev_setup(&d[0], &q, 4, 0) == 0);
	REQUIRE(dev_setup(&d[1], &q, 5, 1) == 0);
	CHECK_EQ_INT(R(&d[0], IPU_REG_TILES), 1472);
	CHECK_EQ_INT(R(&d[0], IPU_REG_TILE_MEM), 624 * 1024);
	CHECK_EQ_INT(R(&d[0], IPU_REG_HW_VERSION), 2);
	CHECK_EQ_INT(R(&d[0], IPU_REG_SERIAL_HI), 0x49505500);
	CHECK(R(&d[0], IPU_REG_SERIAL_LO) != R(&d[1], IPU_REG_SERIAL_LO));
	CHECK_EQ_INT(nop(&d[0]), IPU_ST_OK);
	CHECK_EQ_INT(nop(&d[1]), IPU_ST_OK);
	qt_stop(&q);
}

/* Bring a device back after a reset: rings, executable, streams. */
static int reinit(struct fixture *f, struct sring *sin, struct sring *sout)
{
	struct ipu_cpl c;

	if (dev_enable(&f->d) || nop(&f->d) != IPU_ST_OK)
		return -1;
	if (load_exe(&f->d, f->x.img, f->x.len, &c) != IPU_ST_OK)
		return -1;
	if (sring_create(&f->d, sin, 0) != IPU_ST_OK || sring_create(&f->d, sout, 1) != IPU_ST_OK)
		return -1;
	return 0;
}

/* One normal batch, checked against the in-process engine. */
static int good_batch(struct dev *d, struct sring *sin, struct sring *sout, const struct exe *x,
		      int seed)
{
	float in[1000], out[1000], ref[1000];
	struct ipu_cpl c;
	uint64_t out_list;

	fill_input(in, 1000, seed);
	queue_io(d, sin, sout, in, 1000, 1 + seed % 4, &out_list, 0x5000);
	run_async(d, 0, 0x5002);
	if (wait_cpl(d, &c) || c.status != IPU_ST_OK || c.tag != 0x5002)
		return -1;
	if (wait_scpl(d, &c) || c.status != IPU_ST_OK || wait_scpl(d, &c) || c.status != IPU_ST_OK)
		return -1;
	read_sg(d, out_list, 2 + seed % 4, out);
	if (ref_run(x, in, ref))
		return -1;
	return memcmp(out, ref, sizeof(out)) ? -1 : 0;
}

/* Random mixes of runs, ABORTs and device resets (at random moments:
 * while stalled, right after a submission, in the middle of a load or of
 * the stream DMA); after each, the device must work and QEMU be alive. */
TEST(chaos_abort_and_reset)
{
	struct fixture f;
	struct sring sin, sout;
	struct ipu_cpl c;
	struct ipu_cmd k;
	float in[1000];
	uint64_t out_list;
	uint32_t rng = getenv("IPU_CHAOS_SEED") ? (uint32_t)atoi(getenv("IPU_CHAOS_SEED")) : 12345;
	int iter, bad = 0;

	REQUIRE(fx_start(&f) == 0);
	struct dev *d = &f.d;

	REQUIRE(reinit(&f, &sin, &sout) == 0);
	for (iter = 0; iter < 40 && !bad; iter++) {
		int action, reset = 0;

		rng = rng * 1103515245u + 12345u;
		action = (int)((rng >> 16) % 6);
		switch (action) {
		case 0:
			bad |= good_batch(d, &sin, &sout, &f.x, iter) ? 1 : 0;
			break;
		case 1:	/* ABORT a stalled run */
			run_async(d, 0, 0x6001);
			bad |= wait_status(d, IPU_STS_STALLED, IPU_STS_STALLED) ? 2 : 0;
			k = (struct ipu_cmd){ .opcode = IPU_CMD_ABORT, .tag = 0x6002 };
			submit(d, &k);
			bad |= wait_cpl(d, &c) || c.status != IPU_ST_ABORTED ? 4 : 0;
			bad |= wait_cpl(d, &c) || c.status != IPU_ST_OK || c.tag != 0x6002 ? 8 : 0;
			break;
		case 2:	/* reset a stalled run */
			run_async(d, 0, 0x6003);
			bad |= wait_status(d, IPU_STS_STALLED, IPU_STS_STALLED) ? 16 : 0;
			reset = 1;
			break;
		case 3:	/* input only, then reset at a random moment */
			fill_input(in, 1000, iter);
			queue_io(d, &sin, &sout, in, 1000, 2, &out_list, 0x6100);
			run_async(d, 0, 0x6004);
			msleep((int)((rng >> 8) % 4));
			reset = 1;
			break;
		case 4:	/* a load, reset under it */
			k = (struct ipu_cmd){ .opcode = IPU_CMD_LOAD_EXE };
			k.addr = make_sg(d, f.x.img, (uint32_t)f.x.len, 7);
			k.sg_count = 7;
			k.len = (uint32_t)f.x.len;
			submit(d, &k);
			reset = 1;
			break;
		default: /* ABORT with nothing running, then a batch */
			k = (struct ipu_cmd){ .opcode = IPU_CMD_ABORT };
			bad |= cmd(d, &k, NULL) != IPU_ST_OK ? 32 : 0;
			bad |= good_batch(d, &sin, &sout, &f.x, iter) ? 64 : 0;
			break;
		}
		if (reset) {
			W(d, IPU_REG_CONTROL, IPU_CTRL_RESET);
			bad |= reinit(&f, &sin, &sout) ? 128 : 0;
		}
		if (!qt_alive(d->q))
			bad |= 256;
		if (bad)
			fprintf(stderr, "  iteration %d action %d: 0x%x\n", iter, action, bad);
	}
	CHECK_EQ_INT(bad, 0);
	CHECK(good_batch(d, &sin, &sout, &f.x, 99) == 0);
	CHECK_EQ_INT(R(d, IPU_REG_STATUS) & (IPU_STS_FATAL | IPU_STS_ERROR), 0);
	fx_stop(&f);
}

/* Level of the PCI interrupt lines (I/O APIC inputs 16..23 on q35). */
static int intx_level(struct qt *q)
{
	int i, level = 0;

	qt_cmd(q, "readl 0x0\n");	/* collect pending IRQ lines */
	for (i = 16; i < 24; i++)
		level |= q->irq[i];
	return level;
}

static int wait_intx(struct qt *q, int level)
{
	long long t0 = now_ms();

	while (now_ms() - t0 < 5000) {
		if (intx_level(q) == level)
			return 0;
		msleep(1);
	}
	return -1;
}

/* Without MSI-X the device drives INTA from INT_CAUSE & ~INT_MASK. */
TEST(intx_fallback)
{
	const char *devs[] = { DEV_ARGS("4", "0x1111"), NULL };
	struct qt q;
	struct dev d;

	REQUIRE(qt_start(&q, devs) == 0);
	REQUIRE(qt_cmd(&q, "irq_intercept_in ioapic\n") != NULL);
	REQUIRE(dev_setup_irq(&d, &q, 4, 0, 1) == 0);
	CHECK_EQ_INT(intx_level(&q), 0);
	CHECK_EQ_INT(nop(&d), IPU_ST_OK);
	CHECK(wait_intx(&q, 1) == 0);
	CHECK_EQ_INT(R(&d, IPU_REG_INT_CAUSE), IPU_INT_CPL);
	CHECK_EQ_INT(readl(&q, d.msi + 4 * IPU_VEC_CPL), 0);	/* no MSI-X message */
	W(&d, IPU_REG_INT_CAUSE, IPU_INT_CPL);			/* RW1C */
	CHECK(wait_intx(&q, 0) == 0);
	/* masked causes do not assert the line; unmasking does */
	W(&d, IPU_REG_INT_MASK, IPU_INT_ALL);
	CHECK_EQ_INT(nop(&d), IPU_ST_OK);
	W(&d, IPU_REG_CMDQ_TAIL, 1000);				/* an error too */
	msleep(20);
	CHECK_EQ_INT(intx_level(&q), 0);
	CHECK_EQ_INT(R(&d, IPU_REG_INT_CAUSE), IPU_INT_CPL | IPU_INT_ERROR);
	W(&d, IPU_REG_INT_MASK, IPU_INT_CPL);
	CHECK(wait_intx(&q, 1) == 0);				/* the error */
	W(&d, IPU_REG_INT_CAUSE, IPU_INT_ERROR);
	CHECK(wait_intx(&q, 0) == 0);
	qt_stop(&q);
}

/* N buffers per stream and N RUNs submitted at once: consumed in order. */
TEST(pipelined_runs)
{
	struct fixture f;
	struct sring sin, sout;
	struct ipu_cpl c;
	static float in[8][1000], out[1000], ref[1000];
	uint64_t out_list[8];
	int i, ok = 1;

	REQUIRE(fx_start(&f) == 0);
	struct dev *d = &f.d;

	REQUIRE(load_exe(d, f.x.img, f.x.len, &c) == IPU_ST_OK);
	REQUIRE(sring_create(d, &sin, 0) == IPU_ST_OK);
	REQUIRE(sring_create(d, &sout, 1) == IPU_ST_OK);
	for (i = 0; i < 8; i++) {
		fill_input(in[i], 1000, 100 + i);
		queue_io(d, &sin, &sout, in[i], 1000, 1 + i % 3, &out_list[i], 0x9000 + 2 * (uint64_t)i);
	}
	for (i = 0; i < 8; i++)
		run_async(d, 0, 0x9100 + (uint64_t)i);
	for (i = 0; i < 8; i++) {
		REQUIRE(wait_cpl(d, &c) == 0);
		ok &= c.status == IPU_ST_OK && c.tag == 0x9100 + (uint64_t)i;
	}
	for (i = 0; i < 16; i++) {
		REQUIRE(wait_scpl(d, &c) == 0);
		ok &= c.status == IPU_ST_OK && c.tag == 0x9000 + (uint64_t)i;
	}
	CHECK(ok);
	for (i = 0; i < 8; i++) {
		read_sg(d, out_list[i], 2 + i % 3, out);
		REQUIRE(ref_run(&f.x, in[i], ref) == 0);
		CHECK_MSG(memcmp(out, ref, sizeof(out)) == 0, "batch %d", i);
	}
	CHECK_EQ_INT(R(d, IPU_REG_CNT_PROGRAMS), 8);
	fx_stop(&f);
}

/* DMA aimed at the device itself: rings, SG pieces and MSI-X messages
 * pointing into its own BAR0 and MSI-X table.  Whatever the device does to
 * itself, QEMU must survive and a reset must bring it back. */
TEST(dma_into_own_registers)
{
	struct fixture f;
	struct ipu_cmd k;
	struct ipu_sg sg[2];
	uint64_t list;
	int i;

	REQUIRE(fx_start(&f) == 0);
	struct dev *d = &f.d;

	/* an SG list whose pieces are the device's registers */
	list = dev_alloc(d, 64, 64);
	sg[0] = (struct ipu_sg){ d->bar0 + IPU_REG_CONTROL, 64, 0 };
	sg[1] = (struct ipu_sg){ d->bar2, 64, 0 };
	mem_write(d->q, list, sg, sizeof(sg));
	k = (struct ipu_cmd){ .opcode = IPU_CMD_LOAD_EXE, .addr = list, .sg_count = 2, .len = 128 };
	submit(d, &k);
	msleep(50);
	k = (struct ipu_cmd){ .opcode = IPU_CMD_READ_TENSOR, .flags = IPU_F_DIRECT, .addr = d->bar0,
			      .len = 64 };
	submit(d, &k);
	msleep(50);
	CHECK(qt_alive(d->q));
	/* MSI-X messages written into CONTROL (RESET) on every completion */
	{
		int cap = find_cap(d->q, d->slot, 0x11);
		uint32_t tbl = cfg_read32(d->q, d->slot, cap + 4);

		for (i = 0; i < IPU_NUM_VECTORS; i++) {
			uint64_t e = d->bar2 + (tbl & ~7u) + 16 * i;

			writel(d->q, e, (uint32_t)(d->bar0 + IPU_REG_CONTROL));
			writel(d->q, e + 8, IPU_CTRL_RESET);
		}
	}
	W(d, IPU_REG_CONTROL, IPU_CTRL_RESET);
	if (dev_enable(d) == 0) {
		k = (struct ipu_cmd){ .opcode = IPU_CMD_NOP };
		submit(d, &k);
		msleep(50);
	}
	CHECK(qt_alive(d->q));
	/* completion ring inside BAR0 */
	W(d, IPU_REG_CONTROL, IPU_CTRL_RESET);
	CHECK(wait_status(d, IPU_STS_RESETTING, 0) == 0);
	W(d, IPU_REG_CMDQ_BASE_LO, (uint32_t)d->cmdq);
	W(d, IPU_REG_CMDQ_SIZE, CMDQ_N);
	W(d, IPU_REG_CPLQ_BASE_LO, (uint32_t)d->bar0 + 0x40);
	W(d, IPU_REG_CPLQ_SIZE, 2);
	W(d, IPU_REG_SCQ_BASE_LO, (uint32_t)d->bar0 + 0x1000);
	W(d, IPU_REG_SCQ_SIZE, 64);
	W(d, IPU_REG_CONTROL, IPU_CTRL_ENABLE);
	if (R(d, IPU_REG_STATUS) & IPU_STS_READY) {
		for (i = 0; i < 4; i++) {
			k = (struct ipu_cmd){ .opcode = IPU_CMD_NOP, .tag = 0x40 + (uint64_t)IPU_CTRL_RESET };
			mem_write(d->q, d->cmdq + 64 * (uint64_t)i, &k, 64);
		}
		W(d, IPU_REG_CMDQ_TAIL, 4);
		msleep(100);
	}
	CHECK(qt_alive(d->q));
	/* a proper reset and setup: everything works again */
	W(d, IPU_REG_CONTROL, IPU_CTRL_RESET);
	cfg_write16(d->q, d->slot, 0x04, 0x6);
	CHECK(dev_setup(d, d->q, d->slot, 0) == 0);
	CHECK_EQ_INT(nop(d), IPU_ST_OK);
	{
		struct sring sin, sout;
		struct ipu_cpl c;

		CHECK_EQ_INT(load_exe(d, f.x.img, f.x.len, &c), IPU_ST_OK);
		CHECK_EQ_INT(sring_create(d, &sin, 0), IPU_ST_OK);
		CHECK_EQ_INT(sring_create(d, &sout, 1), IPU_ST_OK);
		CHECK(good_batch(d, &sin, &sout, &f.x, 5) == 0);
	}
	fx_stop(&f);
}

/* ------------------------------------------------------------------ */
/* fault injection and the progress counter                            */

static uint64_t progress(struct dev *d)
{
	return qt_num(d->q, "readq 0x%llx\n", (unsigned long long)d->bar0 + IPU_REG_PROGRESS_LO);
}

/* Arm a fault from the registers: kind (| flags) on the nth command, only
 * RUNs when run_only. */
static void arm(struct dev *d, uint32_t kind, uint32_t n, int run_only)
{
	W(d, IPU_REG_FAULT_COUNT, n);
	W(d, IPU_REG_FAULT_CTRL, kind | (run_only ? IPU_FAULT_MATCH_OPCODE |
					  (IPU_CMD_RUN << IPU_FAULT_OPCODE_SHIFT) : 0));
}

/* Load the affine executable and create its two streams. */
static int fx_load(struct fixture *f, struct sring *sin, struct sring *sout)
{
	struct ipu_cpl c;

	if (load_exe(&f->d, f->x.img, f->x.len, &c) != IPU_ST_OK ||
	    sring_create(&f->d, sin, 0) != IPU_ST_OK || sring_create(&f->d, sout, 1) != IPU_ST_OK)
		return -1;
	return 0;
}

/* One run of the affine program with fresh buffers; 0 if its results equal
 * the in-process engine's and every completion says OK. */
static int run_checked(struct fixture *f, struct sring *sin, struct sring *sout, int seed,
		       uint64_t tag)
{
	float in[1000], out[1000], ref[1000];
	uint64_t out_list;
	struct ipu_cpl c;
	int bad = 0;

	fill_input(in, 1000, seed);
	queue_io(&f->d, sin, sout, in, 1000, 2, &out_list, tag + 0x100);
	run_async(&f->d, 0, tag);
	if (wait_cpl(&f->d, &c) || c.tag != tag || c.status != IPU_ST_OK)
		bad = 1;
	if (wait_scpl(&f->d, &c) || c.status != IPU_ST_OK || wait_scpl(&f->d, &c) ||
	    c.status != IPU_ST_OK)
		bad = 1;
	read_sg(&f->d, out_list, 3, out);
	if (bad || ref_run(&f->x, in, ref) || memcmp(out, ref, sizeof(ref)))
		return -1;
	return 0;
}

/* A device reset, then the rings, executable and streams again. */
static int recover(struct fixture *f, struct sring *sin, struct sring *sout)
{
	W(&f->d, IPU_REG_CONTROL, IPU_CTRL_RESET);
	return reinit(f, sin, sout);
}

/* The property arms the same state as the registers; bad ones are refused
 * by name; the registers refuse what they do not know. */
TEST(fault_property_and_registers)
{
	const char *devs[] = { DEV_ARGS("4", "0x1111") ",fault=slow:3:run:repeat:arg=7", NULL };
	static const char *const bad[] = { "bogus:1", "hang", "hang:0", "dma:2:launch",
					   "slow:1:arg=5000" };
	struct qt q;
	struct dev d;
	char cmdline[512], out[512];
	size_t i, n;

	REQUIRE(qt_start(&q, devs) == 0);
	REQUIRE(dev_setup(&d, &q, 4, 0) == 0);
	CHECK(R(&d, IPU_REG_CAPS) & IPU_CAP_PROGRESS);
	CHECK(R(&d, IPU_REG_CAPS) & IPU_CAP_FAULT);
	CHECK_EQ_INT(R(&d, IPU_REG_FAULT_CTRL), IPU_FAULT_SLOW | IPU_FAULT_REPEAT |
		     IPU_FAULT_MATCH_OPCODE | IPU_CMD_RUN << IPU_FAULT_OPCODE_SHIFT);
	CHECK_EQ_INT(R(&d, IPU_REG_FAULT_COUNT), 3);
	CHECK_EQ_INT(R(&d, IPU_REG_FAULT_ARG), 7);
	/* the configuration survives a device reset */
	W(&d, IPU_REG_CONTROL, IPU_CTRL_RESET);
	REQUIRE(dev_enable(&d) == 0);
	CHECK_EQ_INT(R(&d, IPU_REG_FAULT_COUNT), 3);
	/* refused writes change nothing */
	W(&d, IPU_REG_FAULT_CTRL, 7);				/* no such kind */
	W(&d, IPU_REG_FAULT_CTRL, IPU_FAULT_HANG | (1u << 12));	/* reserved bit */
	W(&d, IPU_REG_FAULT_COUNT, 0);
	W(&d, IPU_REG_FAULT_ARG, IPU_FAULT_MAX_SLOW_MS + 1);
	CHECK_EQ_INT(R(&d, IPU_REG_FAULT_CTRL) & IPU_FAULT_KIND_MASK, IPU_FAULT_SLOW);
	CHECK_EQ_INT(R(&d, IPU_REG_FAULT_COUNT), 3);
	CHECK_EQ_INT(R(&d, IPU_REG_FAULT_ARG), 7);
	W(&d, IPU_REG_FAULT_CTRL, 0);
	CHECK_EQ_INT(R(&d, IPU_REG_FAULT_CTRL), 0);
	CHECK_EQ_INT(R(&d, IPU_REG_FAULT_FIRED), 0);
	CHECK_EQ_INT(nop(&d), IPU_ST_OK);
	qt_stop(&q);

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		FILE *p;

		snprintf(cmdline, sizeof(cmdline), "%s -machine q35 -accel qtest -display none "
			 "-nodefaults -L /usr/share/seabios -L /usr/share/qemu "
			 "-device ipu,fault=%s </dev/null 2>&1", qemu_bin(), bad[i]);
		p = popen(cmdline, "r");
		REQUIRE(p != NULL);
		n = fread(out, 1, sizeof(out) - 1, p);
		out[n] = 0;
		CHECK_MSG(pclose(p) != 0 && strstr(out, "ipu: fault '") != NULL,
			  "fault=%s accepted or not named: %s", bad[i], out);
	}
}

/* HANG on the second RUN: the first completes and PROGRESS counts its six
 * steps; then nothing completes, PROGRESS stands still and the device is
 * busy without waiting on a stream, until a reset brings it back. */
TEST(fault_hang)
{
	struct fixture f;
	struct sring sin, sout;
	struct ipu_cmd k = { .opcode = IPU_CMD_NOP };
	uint64_t p0, p1;

	REQUIRE(fx_start(&f) == 0);
	REQUIRE(fx_load(&f, &sin, &sout) == 0);
	arm(&f.d, IPU_FAULT_HANG, 2, 1);
	p0 = progress(&f.d);
	CHECK(run_checked(&f, &sin, &sout, 1, 0xa10) == 0);
	p1 = progress(&f.d);
	CHECK_EQ_INT(p1 - p0, 6);	/* copy, mul, sync, add, exchange, copy */
	{
		float in[1000];
		uint64_t out_list;

		fill_input(in, 1000, 2);
		queue_io(&f.d, &sin, &sout, in, 1000, 2, &out_list, 0xb10);
	}
	run_async(&f.d, 0, 0xa11);
	submit(&f.d, &k);
	CHECK(no_cpl(&f.d, 300));
	CHECK_EQ_INT(R(&f.d, IPU_REG_STATUS) & (IPU_STS_BUSY | IPU_STS_STALLED), IPU_STS_BUSY);
	CHECK_EQ_INT(progress(&f.d), p1);
	CHECK_EQ_INT(R(&f.d, IPU_REG_FAULT_FIRED), 1);
	CHECK_EQ_INT(R(&f.d, IPU_REG_FAULT_CTRL), 0);	/* one-shot: disarmed */
	CHECK_EQ_INT(R(&f.d, IPU_REG_SCQ_TAIL), 2);	/* the first run's two, no more */
	REQUIRE(recover(&f, &sin, &sout) == 0);
	CHECK(run_checked(&f, &sin, &sout, 3, 0xa12) == 0);
	CHECK_EQ_INT(progress(&f.d), p1 + 6);	/* not cleared by the reset */
	fx_stop(&f);
}

/* HANG while a program waits on its input stream (armed on a NOP queued
 * behind the RUN): the device no longer counts as waiting for the host, and
 * an input queued now is not taken; a reset recovers. */
TEST(fault_hang_while_stalled)
{
	struct fixture f;
	struct sring sin, sout;
	struct ipu_cmd k = { .opcode = IPU_CMD_NOP };
	float in[1000];
	uint64_t out_list, p0;

	REQUIRE(fx_start(&f) == 0);
	REQUIRE(fx_load(&f, &sin, &sout) == 0);
	run_async(&f.d, 0, 0xe10);
	REQUIRE(wait_status(&f.d, IPU_STS_STALLED, IPU_STS_STALLED) == 0);
	p0 = progress(&f.d);
	arm(&f.d, IPU_FAULT_HANG, 1, 0);
	submit(&f.d, &k);
	CHECK(wait_status(&f.d, IPU_STS_STALLED, 0) == 0);
	CHECK(R(&f.d, IPU_REG_STATUS) & IPU_STS_BUSY);
	CHECK_EQ_INT(R(&f.d, IPU_REG_STALL_STREAM), UINT32_MAX);
	fill_input(in, 1000, 6);
	queue_io(&f.d, &sin, &sout, in, 1000, 2, &out_list, 0xe00);
	CHECK(no_cpl(&f.d, 300));
	CHECK_EQ_INT(R(&f.d, IPU_REG_SCQ_TAIL), 0);
	CHECK_EQ_INT(progress(&f.d), p0);
	REQUIRE(recover(&f, &sin, &sout) == 0);
	CHECK(run_checked(&f, &sin, &sout, 7, 0xe11) == 0);
	fx_stop(&f);
}

/* A program of one compute set repeated (almost) forever: never waits. */
static int build_spin(struct exe *x)
{
	struct ipu_graph *g = ipu_graph_create(TILES, TILE_MEM);
	uint64_t n = 64, one = 1;
	ipu_tensor tx, two;
	uint32_t cs;
	float v2 = 2.0f;
	int rc;

	if (!g)
		return -1;
	tx = ipu_graph_add_tensor(g, "x", IPUX_DT_F32, 1, &n);
	two = ipu_graph_add_tensor(g, "two", IPUX_DT_F32, 1, &one);
	ipu_graph_map_tile(g, tx, 0);
	ipu_graph_map_tile(g, two, 0);
	ipu_graph_set_init(g, two, &v2, 4);
	cs = ipu_graph_add_compute_set(g, "mul");
	{
		struct ipu_slice ops[3] = { { tx, 0, n }, { two, 0, 1 }, { tx, 0, n } };
		uint32_t p[5] = { IPUX_BIN_MUL, 1, (uint32_t)n, 1, 0 };

		ipu_graph_add_vertex(g, cs, IPUX_CL_BINARY, ops, 3, p, 5);
	}
	ipu_graph_add_program(g, ipu_step_repeat(g, 0x7fffffff, ipu_step_execute(g, cs)));
	rc = ipu_graph_compile(g, &x->img, &x->len, NULL);
	if (rc)
		fprintf(stderr, "  compile: %s\n", ipu_graph_error(g));
	ipu_graph_destroy(g);
	return rc;
}

/* HANG while a program computes (armed on a NOP queued behind the RUN): the
 * program stops between two steps, PROGRESS stands still; a reset stops it
 * for good and the device works again. */
TEST(fault_hang_mid_program)
{
	struct fixture f;
	struct exe spin;
	struct ipu_cmd k = { .opcode = IPU_CMD_NOP };
	struct ipu_cpl c;
	uint64_t p0, p1;
	long long t0;

	REQUIRE(fx_start(&f) == 0);
	REQUIRE(build_spin(&spin) == 0);
	REQUIRE(load_exe(&f.d, spin.img, spin.len, &c) == IPU_ST_OK);
	run_async(&f.d, 0, 0xf10);
	p0 = progress(&f.d);
	t0 = now_ms();
	while (progress(&f.d) == p0 && now_ms() - t0 < TIMEOUT_MS)
		msleep(1);
	CHECK(progress(&f.d) > p0);	/* it runs */
	arm(&f.d, IPU_FAULT_HANG, 1, 0);
	submit(&f.d, &k);
	t0 = now_ms();
	while (R(&f.d, IPU_REG_FAULT_FIRED) == 0 && now_ms() - t0 < TIMEOUT_MS)
		msleep(1);
	/* the step under way when it fired ends, then nothing more */
	p1 = progress(&f.d);
	t0 = now_ms();
	do {
		p0 = p1;
		msleep(20);
		p1 = progress(&f.d);
	} while (p1 != p0 && now_ms() - t0 < 2000);
	CHECK(no_cpl(&f.d, 300));
	CHECK_EQ_INT(progress(&f.d), p1);
	CHECK(R(&f.d, IPU_REG_STATUS) & IPU_STS_BUSY);
	W(&f.d, IPU_REG_CONTROL, IPU_CTRL_RESET);
	CHECK(dev_enable(&f.d) == 0);
	CHECK_EQ_INT(nop(&f.d), IPU_ST_OK);
	CHECK_EQ_INT(R(&f.d, IPU_REG_STATUS) & IPU_STS_LOADED, 0);
	free(spin.img);
	fx_stop(&f);
}

/* DROP_IRQ on every second command: those completions are in the ring
 * but neither INT_CAUSE nor an MSI-X message says so. */
TEST(fault_drop_irq_repeating)
{
	struct fixture f;
	int i;

	REQUIRE(fx_start(&f) == 0);
	struct dev *d = &f.d;

	arm(d, IPU_FAULT_DROP_IRQ | IPU_FAULT_REPEAT, 2, 0);
	for (i = 1; i <= 4; i++) {
		msi_fired(d, IPU_VEC_CPL);
		W(d, IPU_REG_INT_CAUSE, IPU_INT_ALL);
		CHECK_EQ_INT(nop(d), IPU_ST_OK);
		msleep(20);
		CHECK_EQ_INT(msi_fired(d, IPU_VEC_CPL), i % 2);
		CHECK_EQ_INT(!!(R(d, IPU_REG_INT_CAUSE) & IPU_INT_CPL), i % 2);
	}
	CHECK_EQ_INT(R(d, IPU_REG_FAULT_FIRED), 2);
	CHECK_EQ_INT(R(d, IPU_REG_FAULT_CTRL) & IPU_FAULT_KIND_MASK, IPU_FAULT_DROP_IRQ);
	fx_stop(&f);
}

/* CORRUPT_CPL: the completion arrives with its tag inverted. */
TEST(fault_corrupt_completion)
{
	struct fixture f;
	struct ipu_cmd k = { .opcode = IPU_CMD_NOP, .tag = 0x1234 };
	struct ipu_cpl c;

	REQUIRE(fx_start(&f) == 0);
	arm(&f.d, IPU_FAULT_CORRUPT_CPL, 1, 0);
	submit(&f.d, &k);
	REQUIRE(wait_cpl(&f.d, &c) == 0);
	CHECK_EQ_INT(c.tag, ~0x1234ull);
	CHECK_EQ_INT(c.status, IPU_ST_OK);
	CHECK_EQ_INT(nop(&f.d), IPU_ST_OK);	/* one-shot */
	fx_stop(&f);
}

/* DMA on a RUN: its input transfer fails as a DMA fault, the run ends with
 * STREAM_ERROR; the device keeps working without a reset. */
TEST(fault_dma)
{
	struct fixture f;
	struct sring sin, sout;
	struct ipu_cpl c;
	float in[1000];
	uint64_t out_list;

	REQUIRE(fx_start(&f) == 0);
	REQUIRE(fx_load(&f, &sin, &sout) == 0);
	arm(&f.d, IPU_FAULT_DMA, 1, 1);
	fill_input(in, 1000, 4);
	queue_io(&f.d, &sin, &sout, in, 1000, 2, &out_list, 0xc00);
	run_async(&f.d, 0, 0xc10);
	REQUIRE(wait_scpl(&f.d, &c) == 0);
	CHECK_EQ_INT(c.tag, 0xc00);
	CHECK_EQ_INT(c.status, IPU_ST_DMA_FAULT);
	REQUIRE(wait_cpl(&f.d, &c) == 0);
	CHECK_EQ_INT(c.tag, 0xc10);
	CHECK_EQ_INT(c.status, IPU_ST_STREAM_ERROR);
	CHECK_EQ_INT(R(&f.d, IPU_REG_ERR_CODE), IPU_ST_STREAM_ERROR);
	CHECK_EQ_INT(R(&f.d, IPU_REG_STATUS) & IPU_STS_FATAL, 0);
	/* the output buffer is still queued: the next run uses it */
	{
		struct ipu_stream_desc di = { 0 };
		float out[1000], ref[1000];

		di.addr = make_sg(&f.d, in, 4000, 2);
		di.len = 4000;
		di.sg_count = 2;
		di.tag = 0xc02;
		sring_push(&f.d, &sin, &di);
		run_async(&f.d, 0, 0xc11);
		REQUIRE(wait_scpl(&f.d, &c) == 0);
		CHECK_EQ_INT(c.status, IPU_ST_OK);
		REQUIRE(wait_scpl(&f.d, &c) == 0);
		CHECK_EQ_INT(c.tag, 0xc01);
		CHECK_EQ_INT(c.status, IPU_ST_OK);
		REQUIRE(wait_cpl(&f.d, &c) == 0);
		CHECK_EQ_INT(c.status, IPU_ST_OK);
		read_sg(&f.d, out_list, 3, out);
		REQUIRE(ref_run(&f.x, in, ref) == 0);
		CHECK(memcmp(out, ref, sizeof(ref)) == 0);
	}
	fx_stop(&f);
}

/* SLOW: each step of the run takes 100 ms more; PROGRESS is seen between
 * its start and end values while the run executes, and the result is the
 * same. */
TEST(fault_slow_progress)
{
	struct fixture f;
	struct sring sin, sout;
	struct ipu_cpl c;
	float in[1000], out[1000], ref[1000];
	uint64_t out_list, p0, p, seen = 0;
	long long t0;

	REQUIRE(fx_start(&f) == 0);
	REQUIRE(fx_load(&f, &sin, &sout) == 0);
	W(&f.d, IPU_REG_FAULT_ARG, 100);
	arm(&f.d, IPU_FAULT_SLOW, 1, 1);
	p0 = progress(&f.d);
	fill_input(in, 1000, 5);
	queue_io(&f.d, &sin, &sout, in, 1000, 2, &out_list, 0xd00);
	run_async(&f.d, 0, 0xd10);
	t0 = now_ms();
	while (now_ms() - t0 < TIMEOUT_MS && (p = progress(&f.d)) < p0 + 6) {
		if (p > p0 && p < p0 + 6)
			seen |= 1ull << (p - p0);
		msleep(5);
	}
	CHECK_MSG(__builtin_popcountll(seen) >= 2, "intermediate PROGRESS values seen: 0x%llx",
		  (unsigned long long)seen);
	REQUIRE(wait_cpl(&f.d, &c) == 0);
	CHECK_EQ_INT(c.status, IPU_ST_OK);
	CHECK_EQ_INT(progress(&f.d), p0 + 6);
	REQUIRE(wait_scpl(&f.d, &c) == 0);
	REQUIRE(wait_scpl(&f.d, &c) == 0);
	read_sg(&f.d, out_list, 3, out);
	REQUIRE(ref_run(&f.x, in, ref) == 0);
	CHECK(memcmp(out, ref, sizeof(ref)) == 0);
	fx_stop(&f);
}

/* ------------------------------------------------------------------ */
/* IPU-Links                                                            */

#define LINK_DEV(slot, serial, index) DEV_ARGS(slot, serial) ",link=l0,link-index=" index

/* IPU_CMD_LINK_STREAM: own D2H stream `stream` to `peer`'s H2D `peer_stream`. */
static int link_stream(struct dev *d, uint32_t stream, uint32_t peer, uint32_t peer_stream,
		       uint32_t bytes, struct ipu_cpl *out)
{
	struct ipu_cmd c = { .opcode = IPU_CMD_LINK_STREAM };

	c.arg0 = stream;
	c.arg1 = peer << 16 | peer_stream;
	c.len = bytes;
	return cmd(d, &c, out);
}

/* One direct buffer of n floats queued on a stream ring; returns its address. */
static uint64_t queue_direct(struct dev *d, struct sring *s, const float *data, uint32_t n,
			     uint64_t tag)
{
	struct ipu_stream_desc desc = { 0 };

	desc.addr = dev_alloc(d, n * 4, 64);
	if (data)
		mem_write(d->q, desc.addr, data, n * 4);
	else
		mem_zero(d->q, desc.addr, n * 4);
	desc.len = n * 4;
	desc.flags = IPU_F_DIRECT;
	desc.tag = tag;
	sring_push(d, s, &desc);
	return desc.addr;
}

/*
 * Two devices on one ipu-link: device 0's output stream (z) goes into
 * device 1's input stream (x) device to device, so device 1 returns
 * affine(affine(in)); neither linked end takes a descriptor or guest
 * memory, the link counters hold the bytes and the modelled cycles, and
 * `depth` buffers let the sender run that far ahead.  Wrong ends are
 * refused with IPU_ST_LINK.
 */
TEST(link_two_devices)
{
	const char *devs[] = { "ipu-link,id=l0,depth=2", LINK_DEV("4", "0x1111", "0"), LINK_DEV("5", "0x2222", "1"),
			       DEV_ARGS("6", "0x3333"), NULL };
	struct qt q;
	struct dev d[3];
	struct sring sin, sout;
	struct exe x;
	struct ipu_cpl c;
	float in[3][1000], mid[1000], out[1000], ref[1000];
	uint64_t obuf[3];
	int i;

	REQUIRE(build_affine(&x, 1000, 4) == 0);
	REQUIRE(qt_start(&q, devs) == 0);
	REQUIRE(dev_setup(&d[0], &q, 4, 0) == 0);
	REQUIRE(dev_setup(&d[1], &q, 5, 1) == 0);
	REQUIRE(dev_setup(&d[2], &q, 6, 2) == 0);
	CHECK(R(&d[0], IPU_REG_CAPS) & IPU_CAP_LINK);
	CHECK(R(&d[1], IPU_REG_CAPS) & IPU_CAP_LINK);
	CHECK_EQ_INT(R(&d[2], IPU_REG_CAPS) & IPU_CAP_LINK, 0);
	CHECK_EQ_INT(R(&d[0], IPU_REG_LINK_INDEX), 0);
	CHECK_EQ_INT(R(&d[1], IPU_REG_LINK_INDEX), 1);
	CHECK_EQ_INT(R(&d[2], IPU_REG_LINK_INDEX), UINT32_MAX);
	for (i = 0; i < 3; i++)
		REQUIRE(load_exe(&d[i], x.img, x.len, &c) == IPU_ST_OK);
	/* device 0 feeds stream 0 from the guest; device 1 returns stream 1 */
	REQUIRE(sring_create(&d[0], &sin, 0) == IPU_ST_OK);
	REQUIRE(sring_create(&d[1], &sout, 1) == IPU_ST_OK);

	/* refused: size, direction, peer, a device on no link */
	CHECK_EQ_INT(link_stream(&d[0], 1, 1, 0, 2000, &c), IPU_ST_LINK);
	CHECK_EQ_INT(c.result, IPU_LKE_SIZE);
	CHECK_EQ_INT(link_stream(&d[0], 0, 1, 0, 4000, &c), IPU_ST_LINK);
	CHECK_EQ_INT(c.result, IPU_LKE_STREAM);
	CHECK_EQ_INT(link_stream(&d[0], 7, 1, 0, 4000, &c), IPU_ST_LINK);
	CHECK_EQ_INT(c.result, IPU_LKE_STREAM);
	CHECK_EQ_INT(link_stream(&d[0], 1, 0, 0, 4000, &c), IPU_ST_LINK);
	CHECK_EQ_INT(c.result, IPU_LKE_PEER);
	CHECK_EQ_INT(link_stream(&d[0], 1, 5, 0, 4000, &c), IPU_ST_LINK);
	CHECK_EQ_INT(c.result, IPU_LKE_PEER);
	CHECK_EQ_INT(link_stream(&d[2], 1, 1, 0, 4000, &c), IPU_ST_LINK);
	CHECK_EQ_INT(c.result, IPU_LKE_NO_LINK);
	CHECK_EQ_INT(R(&d[0], IPU_REG_ERR_CODE), IPU_ST_LINK);
	W(&d[0], IPU_REG_ERR_CODE, 0);

	CHECK_EQ_INT(link_stream(&d[0], 1, 1, 0, 4000, &c), IPU_ST_OK);
	CHECK_EQ_INT(c.result, 4000);
	/* a pair from device 1 into device 0's input, set up twice (the
	 * second replaces the first) and gone with device 1's executable */
	CHECK_EQ_INT(link_stream(&d[1], 1, 0, 0, 4000, &c), IPU_ST_OK);
	CHECK_EQ_INT(link_stream(&d[1], 1, 0, 0, 4000, &c), IPU_ST_OK);
	{
		struct ipu_cmd k = { .opcode = IPU_CMD_RESET_ENGINE };

		CHECK_EQ_INT(cmd(&d[1], &k, NULL), IPU_ST_OK);
		REQUIRE(load_exe(&d[1], x.img, x.len, &c) == IPU_ST_OK);
	}

	/* the sender runs `depth` (2) transfers ahead, the third waits */
	for (i = 0; i < 3; i++) {
		fill_input(in[i], 1000, 40 + i);
		queue_direct(&d[0], &sin, in[i], 1000, 0x700 + (uint64_t)i);
		run_async(&d[0], 0, 0x710 + (uint64_t)i);
	}
	for (i = 0; i < 2; i++) {
		REQUIRE(wait_cpl(&d[0], &c) == 0);
		CHECK_EQ_INT(c.tag, 0x710 + (uint64_t)i);
		CHECK_EQ_INT(c.status, IPU_ST_OK);
	}
	CHECK(no_cpl(&d[0], 200));
	for (i = 0; i < 3; i++) {
		obuf[i] = queue_direct(&d[1], &sout, NULL, 1000, 0x800 + (uint64_t)i);
		run_async(&d[1], 0, 0x810 + (uint64_t)i);
	}
	REQUIRE(wait_cpl(&d[0], &c) == 0);
	CHECK_EQ_INT(c.tag, 0x712);
	CHECK_EQ_INT(c.status, IPU_ST_OK);
	for (i = 0; i < 3; i++) {
		REQUIRE(wait_cpl(&d[1], &c) == 0);
		CHECK_EQ_INT(c.tag, 0x810 + (uint64_t)i);
		CHECK_EQ_INT(c.status, IPU_ST_OK);
		REQUIRE(wait_scpl(&d[1], &c) == 0);
		CHECK_EQ_INT(c.queue, 1);
		CHECK_EQ_INT(c.tag, 0x800 + (uint64_t)i);
		mem_read(&q, obuf[i], out, sizeof(out));
		REQUIRE(ref_run(&x, in[i], mid) == 0);
		REQUIRE(ref_run(&x, mid, ref) == 0);
		CHECK_MSG(memcmp(out, ref, sizeof(ref)) == 0, "run %d: device 1's output is "
			  "not affine(affine(in))", i);
	}
	for (i = 0; i < 3; i++) {
		REQUIRE(wait_scpl(&d[0], &c) == 0);
		CHECK_EQ_INT(c.queue, 0);
		CHECK_EQ_INT(c.tag, 0x700 + (uint64_t)i);
	}
	/* nothing else completed on either stream completion ring */
	{
		struct ipu_cpl extra;
		uint32_t head = d[0].scq_head, head1 = d[1].scq_head;
		int ph = d[0].scq_phase, ph1 = d[1].scq_phase;

		CHECK(wait_ring(&d[0], d[0].scq, SCQ_N, &head, &ph, IPU_REG_SCQ_HEAD, &extra, 50) != 0);
		CHECK(wait_ring(&d[1], d[1].scq, SCQ_N, &head1, &ph1, IPU_REG_SCQ_HEAD, &extra, 50) != 0);
	}
	CHECK_EQ_INT(R(&d[0], IPU_REG_CNT_PROGRAMS), 3);
	CHECK_EQ_INT(R(&d[1], IPU_REG_CNT_PROGRAMS), 3);
	CHECK_EQ_INT(R(&d[0], IPU_REG_CNT_STREAM_IN), 12000);
	CHECK_EQ_INT(R(&d[0], IPU_REG_CNT_STREAM_OUT), 0);
	CHECK_EQ_INT(R(&d[1], IPU_REG_CNT_STREAM_IN), 0);
	CHECK_EQ_INT(R(&d[1], IPU_REG_CNT_STREAM_OUT), 12000);
	CHECK_EQ_INT(R(&d[0], IPU_REG_CNT_DESCS), 3);
	CHECK_EQ_INT(R(&d[1], IPU_REG_CNT_DESCS), 3);
	CHECK_EQ_INT(R(&d[0], IPU_REG_CNT_LINK_OUT), 12000);
	CHECK_EQ_INT(R(&d[1], IPU_REG_CNT_LINK_IN), 12000);
	CHECK_EQ_INT(R(&d[0], IPU_REG_CNT_LINK_IN), 0);
	/* 2,000 + 4,000 / 240 modelled cycles a transfer */
	CHECK_EQ_INT(R(&d[0], IPU_REG_CNT_LINK_CYC), 3 * (2000 + 4000 / 240));
	CHECK_EQ_INT(R(&d[1], IPU_REG_CNT_LINK_CYC), 0);
	CHECK_EQ_INT(R(&d[0], IPU_REG_CNT_ERRORS), 5);	/* its five refusals */
	CHECK_EQ_INT(R(&d[1], IPU_REG_CNT_ERRORS), 0);
	CHECK_EQ_INT(R(&d[2], IPU_REG_CNT_ERRORS), 1);
	qt_stop(&q);
	free(x.img);
}

/*
 * The receiver's stream of another size fails both ends; a reset of the
 * sender ends the receiver's wait on the link (IPU_ST_ABORTED, no device
 * error) and both run again once the sender is set up again.
 */
TEST(link_size_mismatch_and_reset)
{
	const char *devs[] = { "ipu-link,id=l0", LINK_DEV("4", "0x1111", "0"),
			       LINK_DEV("5", "0x2222", "1"), NULL };
	struct qt q;
	struct dev d[2];
	struct sring sin, sout;
	struct exe x, small;
	struct ipu_cpl c;
	float in[1000], mid[1000], out[1000], ref[1000];
	uint64_t obuf;

	REQUIRE(build_affine(&x, 1000, 4) == 0);
	REQUIRE(build_affine(&small, 500, 4) == 0);
	REQUIRE(qt_start(&q, devs) == 0);
	REQUIRE(dev_setup(&d[0], &q, 4, 0) == 0);
	REQUIRE(dev_setup(&d[1], &q, 5, 1) == 0);
	REQUIRE(load_exe(&d[0], x.img, x.len, &c) == IPU_ST_OK);
	REQUIRE(load_exe(&d[1], small.img, small.len, &c) == IPU_ST_OK);
	REQUIRE(sring_create(&d[0], &sin, 0) == IPU_ST_OK);
	REQUIRE(sring_create(&d[1], &sout, 1) == IPU_ST_OK);
	REQUIRE(link_stream(&d[0], 1, 1, 0, 4000, &c) == IPU_ST_OK);

	/* 4,000 bytes sent, 2,000 expected: the receiver fails, then the sender */
	fill_input(in, 1000, 3);
	queue_direct(&d[0], &sin, in, 1000, 0x900);
	run_async(&d[0], 0, 0x901);
	REQUIRE(wait_cpl(&d[0], &c) == 0);
	CHECK_EQ_INT(c.status, IPU_ST_OK);
	queue_direct(&d[1], &sout, NULL, 500, 0x910);
	run_async(&d[1], 0, 0x911);
	REQUIRE(wait_cpl(&d[1], &c) == 0);
	CHECK_EQ_INT(c.status, IPU_ST_STREAM_ERROR);
	CHECK(R(&d[1], IPU_REG_CNT_ERRORS) >= 1);
	queue_direct(&d[0], &sin, in, 1000, 0x902);
	run_async(&d[0], 0, 0x903);
	REQUIRE(wait_cpl(&d[0], &c) == 0);
	CHECK_EQ_INT(c.status, IPU_ST_STREAM_ERROR);
	CHECK_EQ_INT(R(&d[1], IPU_REG_CNT_LINK_IN), 0);

	/* the failed run's output buffer is still queued: ABORT hands it back */
	{
		struct ipu_cmd k = { .opcode = IPU_CMD_ABORT };

		CHECK_EQ_INT(cmd(&d[1], &k, NULL), IPU_ST_OK);
	}
	REQUIRE(wait_scpl(&d[1], &c) == 0);
	CHECK_EQ_INT(c.tag, 0x910);
	CHECK_EQ_INT(c.status, IPU_ST_ABORTED);
	CHECK_EQ_INT(R(&d[1], IPU_REG_CNT_ERRORS), 2);	/* LINK (SIZE), then the run's STREAM_ERROR */
	W(&d[1], IPU_REG_ERR_CODE, 0);

	/* the receiver waits on the link; the sender's reset ends that wait */
	REQUIRE(load_exe(&d[1], x.img, x.len, &c) == IPU_ST_OK);
	REQUIRE(link_stream(&d[0], 1, 1, 0, 4000, &c) == IPU_ST_OK);	/* afresh */
	obuf = queue_direct(&d[1], &sout, NULL, 1000, 0x920);
	run_async(&d[1], 0, 0x921);
	CHECK(no_cpl(&d[1], 100));
	W(&d[0], IPU_REG_CONTROL, IPU_CTRL_RESET);
	REQUIRE(wait_cpl(&d[1], &c) == 0);
	CHECK_EQ_INT(c.tag, 0x921);
	CHECK_EQ_INT(c.status, IPU_ST_ABORTED);
	CHECK_EQ_INT(R(&d[1], IPU_REG_STATUS) & IPU_STS_ERROR, 0);

	/* set up again, both run */
	REQUIRE(dev_enable(&d[0]) == 0);
	REQUIRE(load_exe(&d[0], x.img, x.len, &c) == IPU_ST_OK);
	REQUIRE(sring_create(&d[0], &sin, 0) == IPU_ST_OK);
	REQUIRE(link_stream(&d[0], 1, 1, 0, 4000, &c) == IPU_ST_OK);
	fill_input(in, 1000, 4);
	queue_direct(&d[0], &sin, in, 1000, 0x930);
	run_async(&d[0], 0, 0x931);
	run_async(&d[1], 0, 0x932);	/* the output buffer 0x920 is still queued */
	REQUIRE(wait_cpl(&d[0], &c) == 0);
	CHECK_EQ_INT(c.status, IPU_ST_OK);
	REQUIRE(wait_cpl(&d[1], &c) == 0);
	CHECK_EQ_INT(c.tag, 0x932);
	CHECK_EQ_INT(c.status, IPU_ST_OK);
	mem_read(&q, obuf, out, sizeof(out));
	REQUIRE(ref_run(&x, in, mid) == 0);
	REQUIRE(ref_run(&x, mid, ref) == 0);
	CHECK(memcmp(out, ref, sizeof(ref)) == 0);
	CHECK_EQ_INT(R(&d[0], IPU_REG_CNT_LINK_OUT), 4000);
	qt_stop(&q);
	free(x.img);
	free(small.img);
}

/*
 * Four devices on one link as a chain, 0 -> 1 -> 2 -> 3, a split model's
 * shape: only device 0 reads the guest and only device 3 writes it; two
 * requests give affine applied four times, bit for bit the engine's.
 */
TEST(link_four_devices)
{
	const char *devs[] = { "ipu-link,id=l0", LINK_DEV("4", "0x1111", "0"),
			       LINK_DEV("5", "0x2222", "1"), LINK_DEV("6", "0x3333", "2"),
			       LINK_DEV("7", "0x4444", "3"), NULL };
	struct qt q;
	struct dev d[4];
	struct sring sin, sout;
	struct exe x;
	struct ipu_cpl c;
	float in[1000], a[1000], b[1000], out[1000];
	uint64_t obuf;
	int i, r;

	REQUIRE(build_affine(&x, 1000, 4) == 0);
	REQUIRE(qt_start(&q, devs) == 0);
	for (i = 0; i < 4; i++) {
		REQUIRE(dev_setup(&d[i], &q, 4 + i, i) == 0);
		REQUIRE(load_exe(&d[i], x.img, x.len, &c) == IPU_ST_OK);
	}
	for (i = 0; i < 3; i++)
		REQUIRE(link_stream(&d[i], 1, (uint32_t)i + 1, 0, 4000, &c) == IPU_ST_OK);
	REQUIRE(sring_create(&d[0], &sin, 0) == IPU_ST_OK);
	REQUIRE(sring_create(&d[3], &sout, 1) == IPU_ST_OK);
	for (r = 0; r < 2; r++) {
		fill_input(in, 1000, 60 + r);
		obuf = queue_direct(&d[3], &sout, NULL, 1000, 0xa00 + (uint64_t)r);
		for (i = 3; i >= 1; i--)
			run_async(&d[i], 0, 0xa10 + (uint64_t)i);
		queue_direct(&d[0], &sin, in, 1000, 0xa20 + (uint64_t)r);
		run_async(&d[0], 0, 0xa10);
		for (i = 0; i < 4; i++) {
			REQUIRE(wait_cpl(&d[i], &c) == 0);
			CHECK_EQ_INT(c.status, IPU_ST_OK);
		}
		REQUIRE(wait_scpl(&d[3], &c) == 0);
		CHECK_EQ_INT(c.tag, 0xa00 + (uint64_t)r);
		REQUIRE(wait_scpl(&d[0], &c) == 0);
		mem_read(&q, obuf, out, sizeof(out));
		REQUIRE(ref_run(&x, in, a) == 0);
		REQUIRE(ref_run(&x, a, b) == 0);
		REQUIRE(ref_run(&x, b, a) == 0);
		REQUIRE(ref_run(&x, a, b) == 0);
		CHECK_MSG(memcmp(out, b, sizeof(b)) == 0, "request %d: not affine^4(x)", r);
	}
	for (i = 0; i < 4; i++) {
		CHECK_EQ_INT(R(&d[i], IPU_REG_CNT_LINK_OUT), i < 3 ? 8000 : 0);
		CHECK_EQ_INT(R(&d[i], IPU_REG_CNT_LINK_IN), i > 0 ? 8000 : 0);
		CHECK_EQ_INT(R(&d[i], IPU_REG_CNT_STREAM_IN), i == 0 ? 8000 : 0);
		CHECK_EQ_INT(R(&d[i], IPU_REG_CNT_STREAM_OUT), i == 3 ? 8000 : 0);
	}
	qt_stop(&q);
	free(x.img);
}

/* QEMU exits on this command line (it may have connected first). */
static int qemu_refuses(const char *const *devs)
{
	struct qt q;
	int refused;

	if (qt_start(&q, devs))
		return 1;
	qt_cmd(&q, "readl 0x0\n");
	refused = q.dead || !qt_alive(&q);
	qt_stop(&q);
	return refused;
}

/* A link-index taken twice or out of range, a depth over 16: QEMU stops at start. */
TEST(link_index_refused)
{
	const char *twice[] = { "ipu-link,id=l0", LINK_DEV("4", "0x1111", "0"),
				LINK_DEV("5", "0x2222", "0"), NULL };
	const char *range[] = { "ipu-link,id=l0", LINK_DEV("4", "0x1111", "16"), NULL };
	const char *depth[] = { "ipu-link,id=l0,depth=17", LINK_DEV("4", "0x1111", "0"), NULL };
	const char *good[] = { "ipu-link,id=l0,depth=16", LINK_DEV("4", "0x1111", "15"), NULL };

	CHECK(qemu_refuses(twice));
	CHECK(qemu_refuses(range));
	CHECK(qemu_refuses(depth));
	CHECK(!qemu_refuses(good));
}

int main(int argc, char **argv)
{
	TH_INIT(argc, argv);
	signal(SIGPIPE, SIG_IGN);
	if (access(qemu_bin(), X_OK)) {
		fprintf(stderr, "no QEMU at %s: run `make qemu` or set IPU_QEMU\n", qemu_bin());
		printf("0 passed, 1 failed\n");
		return 1;
	}
	RUN(identity);
	RUN(load_run_matches_engine);
	RUN(direct_buffers_tensors_and_stall);
	RUN(pipelined_runs);
	RUN(malformed_executable);
	RUN(malformed_commands);
	RUN(ring_indices_and_wrap);
	RUN(malformed_stream_descriptors);
	RUN(abort_while_waiting_on_stream);
	RUN(reset_while_waiting_on_stream);
	RUN(flr_while_waiting_on_stream);
	RUN(two_devices);
	RUN(interrupt_mask);
	RUN(intx_fallback);
	RUN(completion_ring_backpressure);
	RUN(many_small_sg_pieces);
	RUN(bus_master_off);
	RUN(default_properties);
	RUN(chaos_abort_and_reset);
	RUN(dma_into_own_registers);
	RUN(fault_property_and_registers);
	RUN(fault_hang);
	RUN(fault_hang_while_stalled);
	RUN(fault_hang_mid_program);
	RUN(fault_drop_irq_repeating);
	RUN(fault_corrupt_completion);
	RUN(fault_dma);
	RUN(fault_slow_progress);
	RUN(link_two_devices);
	RUN(link_size_mismatch_and_reset);
	RUN(link_four_devices);
	RUN(link_index_refused);
	return TH_DONE();
}
