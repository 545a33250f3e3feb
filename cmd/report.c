/* firn report: placeholder until the report command lands. */
#include "opt.h"

static const struct opt report_opts[] = { OPT_END };

static int cmd_report(int argc, char **argv)
{
	return error("report: not built yet");
}

const struct cmd report_cmd = { "report", cmd_report, "print a profile", "[FILE]", { report_opts } };
