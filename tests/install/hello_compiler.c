/* hello_compiler.c: compile an ONNX model from memory, run it on the in-process IPU */
#include <stdio.h>
#include <stdlib.h>
#include <ipu/compiler.h>
#include <ipu/runtime.h>

int main(int argc, char **argv)
{
	struct ipu_compile_options o;
	struct ipu_compile_model m = { .name = "hello.onnx" };
	struct ipu_compile_result *res = NULL;
	struct ipuef_file *f = NULL;
	struct ipurt_config cfg;
	struct ipurt_runner *r = NULL;
	float x[3] = { 1, 1, 1 }, y[3];
	struct ipurt_tensor in = { "X", IPURT_DT_F32, 2, { 1, 3 }, x };
	struct ipurt_tensor out = { "Y", IPURT_DT_F32, 2, { 1, 3 }, y };
	char err[256] = "", *onnx;
	long len;
	FILE *fp = argc == 2 ? fopen(argv[1], "rb") : NULL;

	if (!fp || fseek(fp, 0, SEEK_END) || (len = ftell(fp)) <= 0 || fseek(fp, 0, SEEK_SET) ||
	    !(onnx = malloc((size_t)len)) || fread(onnx, 1, (size_t)len, fp) != (size_t)len)
		return fprintf(stderr, "hello_compiler: usage: hello_compiler MODEL.onnx\n"), 1;
	fclose(fp);
	m.data = onnx;			/* the model's bytes: no file is read or written */
	m.size = (size_t)len;
	ipu_compile_options_init(&o);
	o.models = &m;
	o.num_models = 1;
	if (ipu_compile(&o, &res) < 0)
		return fprintf(stderr, "hello_compiler: %s\n", res ? res->error : "out of memory"), 1;
	ipurt_config_init(&cfg);
	cfg.device = "model";
	if (ipuef_open_mem(res->executable, res->executable_size, &f, err, sizeof(err)) ||
	    ipurt_runner_create_from(f, &cfg, &r, err, sizeof(err)) ||
	    ipurt_runner_execute(r, &in, 1, &out, 1, err, sizeof(err)))
		return fprintf(stderr, "hello_compiler: %s\n", err), 1;
	printf("%zu bytes compiled (%u tiles used); Y[0..2] = %g %g %g\n", res->executable_size,
	       res->summary.stats.tiles_used, y[0], y[1], y[2]);
	ipurt_runner_destroy(r);
	ipuef_close(f);
	ipu_compile_result_free(res);
	free(onnx);
	return 0;
}
