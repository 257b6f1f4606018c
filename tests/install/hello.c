/* hello.c: run an f32 model on the in-process IPU, print its first output */
#include <stdio.h>
#include <stdlib.h>
#include <ipu/runtime.h>

int main(int argc, char **argv)
{
	struct ipurt_config cfg;
	struct ipurt_runner *r;
	struct ipurt_tensor t[16];
	uint32_t nin, i, k;
	char err[256] = "";
	int n;

	ipurt_config_init(&cfg);
	cfg.device = "model";	/* the in-process device ("/dev/accel/accel0": a card) */
	if (argc != 2 || ipurt_runner_create(argv[1], &cfg, &r, err, sizeof(err)))
		return fprintf(stderr, "hello: %s\n", argc == 2 ? err : "usage: hello MODEL.ipuef"), 1;
	n = ipurt_runner_io(r, -1, 0, t, NULL, 16, &nin);
	for (i = 0; n > 0 && i < (uint32_t)n; i++) {
		size_t count = 1;
		for (k = 0; k < t[i].rank; k++)
			count *= t[i].dims[k];
		if (!(t[i].data = calloc(count, ipurt_dtype_size(t[i].dtype))))
			return fprintf(stderr, "hello: out of memory\n"), 1;
		for (k = 0; i < nin && t[i].dtype == IPURT_DT_F32 && k < count; k++)
			((float *)t[i].data)[k] = 1.0f;	/* every input all ones */
	}
	if (n <= (int)nin || ipurt_runner_execute(r, t, nin, t + nin, n - nin, err, sizeof(err)))
		return fprintf(stderr, "hello: %s\n", n <= (int)nin ? "no outputs" : err), 1;
	float *y = t[nin].data;
	printf("%s[0..2] = %g %g %g\n", t[nin].name, y[0], y[1], y[2]);
	ipurt_runner_destroy(r);
	return 0;
}
