#!/usr/bin/python3
"""Turns report_page.html into C: the text before and after the
@@REPORT_DATA@@ marker as two strings.  usage: gen_page.py PAGE.html OUT.c"""
import sys

page = open(sys.argv[1], encoding="utf-8").read()
head, sep, tail = page.partition("@@REPORT_DATA@@")
if not sep or "@@REPORT_DATA@@" in tail:
    sys.exit("gen_page.py: the page needs exactly one @@REPORT_DATA@@")


def c_string(text):
    out = []
    for line in text.splitlines(keepends=True):
        b = line.encode("utf-8")
        out.append('"' + "".join(
            chr(c) if 32 <= c < 127 and chr(c) not in '"\\?' else "\\%03o" % c for c in b) + '"')
    return "\n\t".join(out) if out else '""'


with open(sys.argv[2], "w") as f:
    f.write("/* Generated from compiler/report/report_page.html by gen_page.py. */\n")
    f.write("extern const char ipuc_report_page_head[], ipuc_report_page_tail[];\n")
    f.write("const char ipuc_report_page_head[] =\n\t%s;\n" % c_string(head))
    f.write("const char ipuc_report_page_tail[] =\n\t%s;\n" % c_string(tail))
