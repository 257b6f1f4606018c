/* SPDX-License-Identifier: MIT */
/*
 * pbtxt.h - a config.pbtxt (protobuf text format) turned into the binary
 * encoding of Triton's inference.ModelConfig (server/triton/
 * model_config.proto) by the protobuf library's own text parser
 * (server/pbtxt.cc, C++), for the C side to unpack with protoc-c's
 * generated code.
 */
#ifndef IPU_SERVE_PBTXT_H
#define IPU_SERVE_PBTXT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Parse len bytes of text as an inference.ModelConfig.  `acted` is a
 * NULL-terminated list of the field paths the caller acts on ("name",
 * "input.dims", "parameters.value.string_value"); a field written in the
 * text whose path is not listed is refused by its path, unless it is a
 * singular scalar written with its default value (which changes nothing).
 * A message field must be listed for its fields to be looked at.
 *
 * Returns 0 with *out (malloc'd, *outlen bytes, never NULL) the binary
 * encoding, or -1 with err: "line L column C: <the library's message>" for
 * text the library refuses (syntax, unknown field, wrong type), "line L:
 * <path> is ..." for a field not acted on.  Lines count from 1.
 */
int srv_pbtxt_encode(const char *text, size_t len, const char *const *acted, uint8_t **out,
		     size_t *outlen, char *err, size_t errlen);

/*
 * The line (from 1) where the field at `path` ("instance_group.count") is
 * written in text, taking element `index` of the first repeated field on
 * the path (-1: its first); 0 if the text does not parse or has no such
 * field.  For the messages of values the caller refuses.
 */
int srv_pbtxt_line(const char *text, size_t len, const char *path, int index);

#ifdef __cplusplus
}
#endif

#endif /* IPU_SERVE_PBTXT_H */
