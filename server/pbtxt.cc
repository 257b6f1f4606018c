// SPDX-License-Identifier: MIT
/*
 * pbtxt.cc - config.pbtxt read by the protobuf library's text format
 * (google::protobuf::TextFormat) into the generated inference::ModelConfig
 * of Triton's model_config.proto, then handed to C as its binary encoding.
 * C++ only because libprotobuf's text format is C++: nothing of C++ leaves
 * this file (no exception crosses srv_pbtxt_encode).
 */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <set>
#include <string>

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>

#include "model_config.pb.h"
#include "pbtxt.h"

namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;
using google::protobuf::TextFormat;

/* The first error the library reports, with its place (0-based). */
class FirstError : public google::protobuf::io::ErrorCollector {
public:
	std::string msg;
	int line = -1, column = -1;

	void AddError(int l, google::protobuf::io::ColumnNumber c, const std::string &m) override
	{
		if (line < 0 && msg.empty()) {
			line = l;
			column = c;
			msg = m;
		}
	}
	void AddWarning(int, google::protobuf::io::ColumnNumber, const std::string &) override {}
};

/*
 * Every field written in the text (the parse tree holds a place for it)
 * must be one the caller acts on; a proto3 scalar left at its default
 * (HasField false) changes nothing and passes.
 */
bool walk(const Message &m, const TextFormat::ParseInfoTree *tree, const std::string &prefix,
	  const std::set<std::string> &acted, std::string &why, int &line)
{
	const Descriptor *d = m.GetDescriptor();
	const Reflection *r = m.GetReflection();

	for (int i = 0; i < d->field_count(); i++) {
		const FieldDescriptor *f = d->field(i);
		const std::string path = prefix.empty() ? f->name() : prefix + "." + f->name();
		/* a list "dims: [1, 2]" has one place for all its values */
		const TextFormat::ParseLocation at = tree->GetLocation(f, f->is_repeated() ? 0 : -1);
		const bool message = f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE;

		if (at.line < 0)
			continue;
		if (!acted.count(path)) {
			if (!f->is_repeated() && !message && !r->HasField(m, f))
				continue;
			why = path;
			line = at.line;
			return false;
		}
		if (!message)
			continue;
		if (!f->is_repeated()) {
			const TextFormat::ParseInfoTree *sub = tree->GetTreeForNested(f, -1);

			if (sub && !walk(r->GetMessage(m, f), sub, path, acted, why, line))
				return false;
			continue;
		}
		for (int k = 0; k < r->FieldSize(m, f); k++) {
			const TextFormat::ParseInfoTree *sub = tree->GetTreeForNested(f, k);

			if (sub && !walk(r->GetRepeatedMessage(m, f, k), sub, path, acted, why, line))
				return false;
		}
	}
	return true;
}

int encode(const char *text, size_t len, const char *const *acted, uint8_t **out, size_t *outlen,
	   char *err, size_t errlen)
{
	inference::ModelConfig cfg;
	TextFormat::Parser parser;
	TextFormat::ParseInfoTree tree;
	FirstError errors;
	std::set<std::string> known;
	std::string why, bin;
	int line = -1;

	for (; acted && *acted; acted++)
		known.insert(*acted);
	parser.RecordErrorsTo(&errors);
	parser.WriteLocationsTo(&tree);
	if (!parser.ParseFromString(std::string(text, len), &cfg)) {
		if (errors.line >= 0)
			snprintf(err, errlen, "line %d column %d: %s", errors.line + 1, errors.column + 1,
				 errors.msg.c_str());
		else
			snprintf(err, errlen, "%s", errors.msg.empty() ? "not a ModelConfig in text format"
								       : errors.msg.c_str());
		return -1;
	}
	if (!walk(cfg, &tree, "", known, why, line)) {
		snprintf(err, errlen, "line %d: %s is a field of Triton's ModelConfig that ipu-serve "
			 "does not act on (remove it; see Documentation/serve/repository.md)",
			 line + 1, why.c_str());
		return -1;
	}
	if (!cfg.SerializeToString(&bin)) {
		snprintf(err, errlen, "the configuration could not be encoded");
		return -1;
	}
	*out = static_cast<uint8_t *>(malloc(bin.size() ? bin.size() : 1));
	if (!*out) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	memcpy(*out, bin.data(), bin.size());
	*outlen = bin.size();
	return 0;
}

int line_of(const char *text, size_t len, const char *path, int index)
{
	inference::ModelConfig cfg;
	TextFormat::Parser parser;
	TextFormat::ParseInfoTree tree;
	FirstError errors;
	const std::string p(path);
	const TextFormat::ParseInfoTree *t = &tree;
	const Descriptor *d = cfg.GetDescriptor();
	size_t from = 0;
	bool indexed = false;
	int line = -1;

	parser.RecordErrorsTo(&errors);
	parser.WriteLocationsTo(&tree);
	if (!parser.ParseFromString(std::string(text, len), &cfg))
		return 0;
	while (t && d) {
		const size_t dot = p.find('.', from);
		const FieldDescriptor *f =
			d->FindFieldByName(p.substr(from, dot == std::string::npos ? dot : dot - from));
		int k = -1;

		if (!f)
			break;
		if (f->is_repeated()) {
			k = indexed || index < 0 ? 0 : index;
			indexed = true;
		}
		TextFormat::ParseLocation at = t->GetLocation(f, k);
		/* a list "[a, b]" has one place for all its elements */
		if (at.line < 0 && k > 0)
			at = t->GetLocation(f, 0);
		if (at.line < 0)
			break;
		line = at.line;
		if (dot == std::string::npos || f->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE)
			break;
		t = t->GetTreeForNested(f, k);
		d = f->message_type();
		from = dot + 1;
	}
	return line + 1;
}

} // namespace

extern "C" int srv_pbtxt_encode(const char *text, size_t len, const char *const *acted,
				uint8_t **out, size_t *outlen, char *err, size_t errlen)
{
	*out = nullptr;
	*outlen = 0;
	try {
		return encode(text, len, acted, out, outlen, err, errlen);
	} catch (const std::bad_alloc &) {
		snprintf(err, errlen, "out of memory");
	} catch (...) {
		snprintf(err, errlen, "the protobuf library failed on this text");
	}
	free(*out);
	*out = nullptr;
	return -1;
}

extern "C" int srv_pbtxt_line(const char *text, size_t len, const char *path, int index)
{
	try {
		return line_of(text, len, path, index);
	} catch (...) {
		return 0;
	}
}
