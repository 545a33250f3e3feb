/* firn record: placeholder until the record command lands. */
#include "opt.h"

static const struct opt record_opts[] = { OPT_END };

static int cmd_record(int argc, char **argv)
{
	return error("record: not built yet");
}

const struct cmd record_cmd = { "record", cmd_record, "record CPU stacks", "[-a|-p PID|-- CMD]", { record_opts } };
