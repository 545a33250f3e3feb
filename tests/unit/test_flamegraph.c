/* Unit tests for lib/format/flamegraph: flamegraph.pl's merge and geometry on small profiles (rects
 * computed by hand with its formulas), sibling order, pruning, --reverse, --inverted, escaping,
 * deterministic colors, kind colors, the palette file and the two-valued (diff) tree. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/flamegraph.h"
#include "model/profile.h"

/* A profile with an app, a kernel and a JIT mapping and one sample type "samples". */
struct fixture {
	struct profile p;
	uint64_t app, kernel, jit;
};

static void fixture_init(struct fixture *fx)
{
	assert_int_equal(profile_init(&fx->p), 0);
	assert_int_equal(profile_add_sample_type(&fx->p, "samples", "count"), 0);
	fx->app = profile_add_mapping(&fx->p, 0x1000, 0x2000, 0, "/usr/bin/app", "");
	fx->kernel = profile_add_mapping(&fx->p, 0, 0, 0, "[kernel.kallsyms]", "");
	fx->jit = profile_add_mapping(&fx->p, 0, 0, 0, "[jit]", "");
	assert_true(fx->app == 1 && fx->kernel == 2 && fx->jit == 3);
}

/* Location of one frame spec: "name" (app), "k:name" (kernel), "j:name" (JIT), or
 * "outer+inner" (inner inlined into outer). */
static uint64_t frame_loc(struct fixture *fx, const char *spec)
{
	const char *plus = strchr(spec, '+');

	if (plus) {
		char outer[128];
		snprintf(outer, sizeof(outer), "%.*s", (int)(plus - spec), spec);
		struct profile_line lines[2] = {
			{ profile_function(&fx->p, plus + 1, NULL, "app.c", 0), 7 },
			{ profile_function(&fx->p, outer, NULL, "app.c", 0), 30 },
		};
		return profile_add_location(&fx->p, fx->app, 0x1100, lines, 2);
	}
	uint64_t m = fx->app;
	enum frame_kind kind = FRAME_USER;
	if (spec[0] && spec[1] == ':') {
		m = spec[0] == 'k' ? fx->kernel : fx->jit;
		kind = spec[0] == 'k' ? FRAME_KERNEL : FRAME_JIT;
		spec += 2;
	}
	int64_t f = profile_function(&fx->p, spec, NULL, "", 0);
	assert_true(f > 0);
	return profile_simple_location(&fx->p, m, f, kind);
}

/* Adds a sample "root;...;leaf" (root first, as folded text) with a value and optional comm. */
static void add_stack(struct fixture *fx, const char *stack, int64_t value, const char *comm)
{
	uint64_t locs[64];
	char buf[512], *save = NULL;
	uint32_t n = 0;

	snprintf(buf, sizeof(buf), "%s", stack);
	for (char *tok = strtok_r(buf, ";", &save); tok; tok = strtok_r(NULL, ";", &save))
		locs[n++] = frame_loc(fx, tok);
	for (uint32_t i = 0; i < n / 2; i++) {
		uint64_t t = locs[i];
		locs[i] = locs[n - 1 - i];
		locs[n - 1 - i] = t;
	}
	struct profile_label label = { profile_intern(&fx->p, "comm"),
				       comm ? profile_intern(&fx->p, comm) : 0, 0, 0 };
	assert_int_equal(profile_add_sample(&fx->p, locs, n, &value, &label, comm ? 1 : 0), 0);
}

/* Writes the flame graph of fx with o (or defaults) into a malloc'ed string. */
static char *render(struct fixture *fx, const struct flamegraph_opts *o, int want)
{
	struct flamegraph_opts def;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!o) {
		flamegraph_opts_init(&def);
		o = &def;
	}
	assert_non_null(f);
	assert_int_equal(flamegraph_write(&fx->p, f, o), want);
	assert_int_equal(fclose(f), 0);
	return buf;
}

/* The frame group whose tooltip starts with title: its text up to the end of the line. */
static char *frame_line(const char *svg, const char *title)
{
	char key[256];
	snprintf(key, sizeof(key), "<g><title>%s", title);
	const char *g = strstr(svg, key);
	if (!g)
		return NULL;
	return strndup(g, strchr(g, '\n') - g);
}

/* True when a frame's tooltip starts with title. */
static bool has_frame(const char *svg, const char *title)
{
	char *line = frame_line(svg, title);

	free(line);
	return line != NULL;
}

/* Asserts the frame with tooltip `title` has exactly this rect (fill aside) and label. */
static void assert_frame(const char *svg, const char *title, const char *rect, const char *text)
{
	char *line = frame_line(svg, title), want[512];

	if (!line)
		fail_msg("no frame '%s'", title);
	snprintf(want, sizeof(want), "<g><title>%s</title><rect %s fill=\"", title, rect);
	if (strncmp(line, want, strlen(want)))
		fail_msg("frame '%s':\n got  %s\n want %s...", title, line, want);
	snprintf(want, sizeof(want), "\" rx=\"2\" ry=\"2\"/><text %s</text></g>", text);
	size_t ll = strlen(line), wl = strlen(want);
	if (ll < wl || strcmp(line + ll - wl, want))
		fail_msg("frame '%s':\n got  %s\n want ...%s", title, line, want);
	free(line);
}

/* The fill of the frame with tooltip title, as "rgb(r,g,b)". */
static void frame_fill(const char *svg, const char *title, char *out, size_t len)
{
	char *line = frame_line(svg, title);

	if (!line)
		fail_msg("no frame '%s'", title);
	const char *f = strstr(line, "fill=\"");
	assert_non_null(f);
	snprintf(out, len, "%.*s", (int)(strchr(f + 6, '"') - f - 6), f + 6);
	free(line);
}

static int count(const char *s, const char *what)
{
	int n = 0;
	for (const char *p = s; (p = strstr(p, what)); p += strlen(what))
		n++;
	return n;
}

/* a;b;c 1, a;b;d 2, a;e 3: total 6, 1180/6 px a sample, depth 3 -> height 4*16+36+34 = 134;
 * depth d has y = 134-34-(d+1)*16+1; x = 10 + start*196.67 rounded to tenths. */
static void test_golden_three_stacks(void **state)
{
	struct fixture fx;

	fixture_init(&fx);
	add_stack(&fx, "a;e", 3, NULL);
	add_stack(&fx, "a;b;d", 2, NULL);
	add_stack(&fx, "a;b;c", 1, NULL);
	char *svg = render(&fx, NULL, 0);
	assert_non_null(strstr(svg, "<svg version=\"1.1\" width=\"1200\" height=\"134\" "));
	assert_non_null(strstr(svg, "<text id=\"title\" x=\"600.00\" y=\"24\">Flame Graph</text>"));
	assert_non_null(strstr(svg, "<text id=\"details\" x=\"10.00\" y=\"117\"> </text>"));
	assert_frame(svg, "all (6 samples, 100%)",
		     "x=\"10.0\" y=\"85\" width=\"1180.0\" height=\"15.0\"",
		     "x=\"13.00\" y=\"95.5\">all");
	assert_frame(svg, "a (6 samples, 100.00%)",
		     "x=\"10.0\" y=\"69\" width=\"1180.0\" height=\"15.0\"",
		     "x=\"13.00\" y=\"79.5\">a");
	assert_frame(svg, "b (3 samples, 50.00%)",
		     "x=\"10.0\" y=\"53\" width=\"590.0\" height=\"15.0\"",
		     "x=\"13.00\" y=\"63.5\">b");
	assert_frame(svg, "e (3 samples, 50.00%)",
		     "x=\"600.0\" y=\"53\" width=\"590.0\" height=\"15.0\"",
		     "x=\"603.00\" y=\"63.5\">e");
	assert_frame(svg, "c (1 samples, 16.67%)",
		     "x=\"10.0\" y=\"37\" width=\"196.7\" height=\"15.0\"",
		     "x=\"13.00\" y=\"47.5\">c");
	assert_frame(svg, "d (2 samples, 33.33%)",
		     "x=\"206.7\" y=\"37\" width=\"393.3\" height=\"15.0\"",
		     "x=\"209.67\" y=\"47.5\">d");
	assert_int_equal(count(svg, "<g><title>"), 6);
	free(svg);
	profile_release(&fx.p);
}

/* Collects walk nodes as "depth:name:start:value:self" lines. */
struct collect {
	const struct strtab *names;
	char buf[4096];
	size_t len;
};

static int collect_node(void *ctx, const struct flame_node *n)
{
	struct collect *c = ctx;
	c->len += snprintf(c->buf + c->len, sizeof(c->buf) - c->len, "%u:%s:%lld:%lld:%lld\n",
			   n->depth, n->depth ? strtab_get(c->names, n->name) : "all",
			   (long long)n->start, (long long)n->value, (long long)n->self);
	return 0;
}

/* Adds a ';'-separated stack of user frames to a bare tree. */
static void tree_stack(struct flame_tree *t, const char *stack, int64_t value, int64_t base)
{
	uint32_t names[32];
	char buf[256], *save = NULL;
	size_t n = 0;

	snprintf(buf, sizeof(buf), "%s", stack);
	for (char *tok = strtok_r(buf, ";", &save); tok; tok = strtok_r(NULL, ";", &save))
		names[n++] = strtab_intern(t->names, tok, strlen(tok));
	assert_int_equal(flame_tree_add(t, names, NULL, n, value, base), 0);
}

/* The merge: equal stacks add up, siblings in byte order, a frame's self value on its left,
 * and a frame split in two where a sibling's name sorts between its lines (func, func2). */
static void test_tree_merge_and_order(void **state)
{
	struct strtab names;
	struct flame_tree t;
	struct collect c = { .names = &names };

	assert_int_equal(strtab_init(&names), 0);
	flame_tree_init(&t, &names);
	tree_stack(&t, "m;b;x", 2, 0);
	tree_stack(&t, "m;a", 1, 0);
	tree_stack(&t, "m;b", 4, 0);
	tree_stack(&t, "m;B", 1, 0);
	tree_stack(&t, "m;b;x", 3, 0); /* merges with the first */
	tree_stack(&t, "m;_", 1, 0);
	tree_stack(&t, "m;zero", 0, 0); /* ignored */
	assert_int_equal(flame_tree_walk(&t, collect_node, &c), 0);
	assert_string_equal(c.buf, "2:B:0:1:1\n" "2:_:1:1:1\n" "2:a:2:1:1\n"
				   "3:x:7:5:5\n" "2:b:3:9:4\n" "1:m:0:12:0\n" "0:all:0:12:0\n");
	/* adding after a walk: the next one sorts and merges the old and new stacks again */
	c.len = 0;
	tree_stack(&t, "m;b;x", 1, 0);
	tree_stack(&t, "m;a;y", 2, 0);
	assert_int_equal(flame_tree_walk(&t, collect_node, &c), 0);
	assert_string_equal(c.buf, "2:B:0:1:1\n" "2:_:1:1:1\n" "3:y:3:2:2\n" "2:a:2:3:1\n"
				   "3:x:9:6:6\n" "2:b:5:10:4\n" "1:m:0:15:0\n" "0:all:0:15:0\n");
	flame_tree_release(&t);

	flame_tree_init(&t, &names);
	c.len = 0;
	tree_stack(&t, "main;func;x", 1, 0);
	tree_stack(&t, "main;func2", 1, 0);
	tree_stack(&t, "main;func", 1, 0);
	assert_int_equal(flame_tree_walk(&t, collect_node, &c), 0);
	assert_string_equal(c.buf, "2:func:0:1:1\n" "2:func2:1:1:1\n" "3:x:2:1:1\n"
				   "2:func:2:1:0\n" "1:main:0:3:0\n" "0:all:0:3:0\n");
	flame_tree_release(&t);
	strtab_release(&names);
}

/* --minwidth in pixels and in percent: narrow frames go, and the graph's height with them. */
static void test_minwidth(void **state)
{
	struct fixture fx;
	struct flamegraph_opts o;

	fixture_init(&fx);
	add_stack(&fx, "big", 1000, NULL);
	add_stack(&fx, "tiny;deep;deeper", 1, NULL); /* 1180/1001 = 1.18 px */
	char *svg = render(&fx, NULL, 0);
	assert_non_null(strstr(svg, "height=\"134\""));
	assert_true(has_frame(svg, "deeper (1 samples"));
	free(svg);

	flamegraph_opts_init(&o);
	o.minwidth = 2;
	svg = render(&fx, &o, 0);
	assert_non_null(strstr(svg, "height=\"102\"")); /* depth 1: 2*16+36+34 */
	assert_null(strstr(svg, "tiny"));
	assert_int_equal(count(svg, "<g><title>"), 2);
	free(svg);

	o.minwidth = 0.1; /* percent: 1/1001 = 0.0999% of the total is just under */
	o.minwidth_percent = true;
	svg = render(&fx, &o, 0);
	assert_null(strstr(svg, "tiny"));
	free(svg);
	o.minwidth = 0.0999;
	svg = render(&fx, &o, 0);
	assert_non_null(strstr(svg, "tiny"));
	free(svg);
	profile_release(&fx.p);
}

/* --reverse merges from the leaves: a;b;c and x;b;c become c;b;{a,x}. */
static void test_reverse(void **state)
{
	struct fixture fx;
	struct flamegraph_opts o;

	fixture_init(&fx);
	add_stack(&fx, "a;b;c", 1, NULL);
	add_stack(&fx, "x;b;c", 3, NULL);
	flamegraph_opts_init(&o);
	o.reverse = true;
	char *svg = render(&fx, &o, 0);
	assert_frame(svg, "c (4 samples, 100.00%)",
		     "x=\"10.0\" y=\"69\" width=\"1180.0\" height=\"15.0\"", "x=\"13.00\" y=\"79.5\">c");
	assert_frame(svg, "b (4 samples, 100.00%)",
		     "x=\"10.0\" y=\"53\" width=\"1180.0\" height=\"15.0\"", "x=\"13.00\" y=\"63.5\">b");
	assert_frame(svg, "a (1 samples, 25.00%)",
		     "x=\"10.0\" y=\"37\" width=\"295.0\" height=\"15.0\"", "x=\"13.00\" y=\"47.5\">a");
	assert_frame(svg, "x (3 samples, 75.00%)",
		     "x=\"305.0\" y=\"37\" width=\"885.0\" height=\"15.0\"", "x=\"308.00\" y=\"47.5\">x");
	free(svg);
	profile_release(&fx.p);
}

/* --inverted: the root at the top (y = ypad1 = 36), the default title "Icicle Graph"; a
 * subtitle moves the frames down by ypad3 = 24. */
static void test_inverted(void **state)
{
	struct fixture fx;
	struct flamegraph_opts o;

	fixture_init(&fx);
	add_stack(&fx, "a;e", 3, NULL);
	add_stack(&fx, "a;b;d", 2, NULL);
	add_stack(&fx, "a;b;c", 1, NULL);
	flamegraph_opts_init(&o);
	o.inverted = true;
	char *svg = render(&fx, &o, 0);
	assert_non_null(strstr(svg, ">Icicle Graph</text>"));
	assert_non_null(strstr(svg, "inverted: 1"));
	assert_frame(svg, "all (6 samples, 100%)", "x=\"10.0\" y=\"36\" width=\"1180.0\" height=\"15.0\"",
		     "x=\"13.00\" y=\"46.5\">all");
	assert_frame(svg, "d (2 samples, 33.33%)", "x=\"206.7\" y=\"84\" width=\"393.3\" height=\"15.0\"",
		     "x=\"209.67\" y=\"94.5\">d");
	free(svg);
	o.subtitle = "sub";
	o.title = "T";
	svg = render(&fx, &o, 0);
	assert_non_null(strstr(svg, "height=\"158\""));
	assert_non_null(strstr(svg, "<text id=\"title\" x=\"600.00\" y=\"24\">T</text>"));
	assert_non_null(strstr(svg, "<text id=\"subtitle\" x=\"600.00\" y=\"48\">sub</text>"));
	assert_frame(svg, "all (6 samples, 100%)", "x=\"10.0\" y=\"60\" width=\"1180.0\" height=\"15.0\"",
		     "x=\"13.00\" y=\"70.5\">all");
	free(svg);
	profile_release(&fx.p);
}

/* Names, titles and settings are escaped: the document stays well-formed XML and script. */
static void test_escaping(void **state)
{
	struct fixture fx;
	struct flamegraph_opts o;

	fixture_init(&fx);
	add_stack(&fx, "x<&\"'>y;bad\xff\x1b\xc2\x9b\x7f", 1, NULL);
	flamegraph_opts_init(&o);
	o.title = "a<b";
	o.countname = "by&tes";
	o.nametype = "\"]]></script>\x1b\xc2\x9b\x7f";
	char *svg = render(&fx, &o, 0);
	assert_true(has_frame(svg, "x&lt;&amp;&quot;&apos;&gt;y (1 by&amp;tes, 100.00%)"));
	/* invalid UTF-8 and control characters (C0, C1, DEL) are U+FFFD */
	assert_true(has_frame(svg, "bad\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd (1 by&amp;tes"));
	assert_non_null(strstr(svg, ">x&lt;&amp;&quot;&apos;&gt;y</text>"));
	assert_non_null(strstr(svg, ">a&lt;b</text>"));
	assert_non_null(strstr(svg, "nametype: \"\\u0022]]\\u003e\\u003c/script\\u003e"
				    "\\u001b\\ufffd\\u007f\""));
	assert_int_equal(count(svg, "]]>"), 1);
	assert_null(strstr(svg, "\xff"));
	assert_null(strstr(svg, "\x1b"));
	assert_null(strstr(svg, "\xc2\x9b"));
	assert_null(strstr(svg, "\x7f"));
	free(svg);
	profile_release(&fx.p);
}

/* Bidirectional controls in names (U+202A-U+202E, U+2066-U+2069, U+200E/F, U+061C) reach the
 * SVG as their visible escapes, not raw: "x\u202egnp.exe" would read as "xexe.png" in a browser.
 * Other non-ASCII text stays as it is. */
static void test_bidi(void **state)
{
	struct fixture fx;

	fixture_init(&fx);
	add_stack(&fx, "main;x\xe2\x80\xaegnp.exe;\xe2\x81\xa6" "caf\xc3\xa9\xe2\x81\xa9", 1, NULL);
	add_stack(&fx, "main;\xe2\x80\xaa\xe2\x80\xab\xe2\x80\xac\xe2\x80\xad\xe2\x81\xa7\xe2\x81\xa8", 1, NULL);
	char *svg = render(&fx, NULL, 0);
	assert_true(has_frame(svg, "x\\u202egnp.exe (1 samples, 50.00%)"));
	assert_true(has_frame(svg, "\\u2066caf\xc3\xa9\\u2069 (1 samples, 50.00%)"));
	assert_true(has_frame(svg, "\\u202a\\u202b\\u202c\\u202d\\u2067\\u2068 (1 samples"));
	for (unsigned cp = 0x202a; cp <= 0x202e; cp++) {
		char raw[4] = { (char)0xe2, (char)0x80, (char)(0x80 | (cp & 0x3f)), 0 };
		assert_null(strstr(svg, raw));
	}
	for (unsigned cp = 0x2066; cp <= 0x2069; cp++) {
		char raw[4] = { (char)0xe2, (char)0x81, (char)(0x80 | (cp & 0x3f)), 0 };
		assert_null(strstr(svg, raw));
	}
	free(svg);
	profile_release(&fx.p);
}

/* Labels keep the characters that fit ((x2-x1) / (12*0.59) of them), the last two as "..";
 * x and width round exactly as printf does (10.25 -> "10.2"). */
static void test_labels_and_rounding(void **state)
{
	struct fixture fx;

	fixture_init(&fx);
	add_stack(&fx, "abcdefghijklmnopqrstuvwxyz", 1, NULL); /* 39.33 px: 5 characters */
	add_stack(&fx, "z", 29, NULL);
	char *svg = render(&fx, NULL, 0);
	assert_non_null(strstr(svg, ">abc..</text>"));
	free(svg);
	profile_release(&fx.p);

	fixture_init(&fx);
	add_stack(&fx, "a", 1, NULL); /* 1180/4720 = 0.25 px a sample */
	add_stack(&fx, "b", 4719, NULL);
	svg = render(&fx, NULL, 0);
	assert_frame(svg, "a (1 samples, 0.02%)", "x=\"10.0\" y=\"37\" width=\"0.2\" height=\"15.0\"",
		     "x=\"13.00\" y=\"47.5\">");
	assert_frame(svg, "b (4,719 samples, 99.98%)",
		     "x=\"10.2\" y=\"37\" width=\"1179.8\" height=\"15.0\"", "x=\"13.25\" y=\"47.5\">b");
	free(svg);
	profile_release(&fx.p);
}

/* Colors are flamegraph.pl's --hash colors: a function of the name, the same in any graph. */
static void test_colors_deterministic(void **state)
{
	uint8_t rgb[3];
	struct fixture fx, fy;
	char f1[32], f2[32];

	flame_color_of(FLAME_COLORS_HOT, "abc", 3, FRAME_USER, rgb);
	assert_true(rgb[0] == 227 && rgb[1] == 113 && rgb[2] == 24);
	flame_color_of(FLAME_COLORS_HOT, "libc`malloc", 11, FRAME_USER, rgb);
	assert_true(rgb[0] == 222 && rgb[1] == 112 && rgb[2] == 18);
	flame_color_of(FLAME_COLORS_HOT, "", 0, FRAME_USER, rgb);
	assert_true(rgb[0] == 255 && rgb[1] == 230 && rgb[2] == 55);
	flame_color_of(FLAME_COLORS_MEM, "shared_fn", 9, FRAME_USER, rgb);
	assert_true(rgb[0] == 0 && rgb[1] == 229 && rgb[2] == 147);

	fixture_init(&fx);
	add_stack(&fx, "main;shared_fn", 5, NULL);
	fixture_init(&fy);
	add_stack(&fy, "other;x;y;shared_fn", 1, NULL);
	add_stack(&fy, "zzz", 7, NULL);
	char *a = render(&fx, NULL, 0), *b = render(&fy, NULL, 0);
	frame_fill(a, "shared_fn (", f1, sizeof(f1));
	frame_fill(b, "shared_fn (", f2, sizeof(f2));
	assert_string_equal(f1, f2);
	assert_string_equal(f1, "rgb(238,106,106)"); /* the red palette for user frames */
	free(a);
	free(b);
	profile_release(&fx.p);
	profile_release(&fy.p);
}

/* The default scheme tells kernel (orange), JIT (green), inlined (aqua) and user (red) apart;
 * flamegraph.pl's separators "-" and "--" are gray. */
static void test_kind_colors(void **state)
{
	struct fixture fx;
	char fill[32];
	int r, g, b;

	fixture_init(&fx);
	add_stack(&fx, "user;outer+inl;j:jitted;k:kern", 1, NULL);
	add_stack(&fx, "-;--", 1, NULL);
	char *svg = render(&fx, NULL, 0);
	frame_fill(svg, "kern (", fill, sizeof(fill));
	assert_int_equal(sscanf(fill, "rgb(%d,%d,%d)", &r, &g, &b), 3);
	assert_true(r >= 190 && g >= 90 && g <= 155 && b == 0);
	frame_fill(svg, "jitted (", fill, sizeof(fill));
	assert_int_equal(sscanf(fill, "rgb(%d,%d,%d)", &r, &g, &b), 3);
	assert_true(g >= 200 && r == b && r <= 110);
	frame_fill(svg, "inl (", fill, sizeof(fill));
	assert_int_equal(sscanf(fill, "rgb(%d,%d,%d)", &r, &g, &b), 3);
	assert_true(r >= 50 && r <= 110 && g == b && g >= 165);
	frame_fill(svg, "outer (", fill, sizeof(fill));
	assert_int_equal(sscanf(fill, "rgb(%d,%d,%d)", &r, &g, &b), 3);
	assert_true(r >= 200 && g == b && g <= 130);
	frame_fill(svg, "- (", fill, sizeof(fill));
	assert_string_equal(fill, "rgb(200,200,200)");
	frame_fill(svg, "-- (", fill, sizeof(fill));
	assert_string_equal(fill, "rgb(160,160,160)");
	free(svg);
	profile_release(&fx.p);
}

/* Frames of the profile mappings "[python]" and "[gpu]" (user frames) get their own palettes in
 * the default scheme, yellow and purple, not the red of native user frames; their names carry
 * no annotation. */
static void test_python_gpu_colors(void **state)
{
	struct fixture fx;
	char fill[32];
	int r, g, b;

	fixture_init(&fx);
	uint64_t py = profile_add_mapping(&fx.p, 0, 0, 0, "[python]", "");
	uint64_t gpu = profile_add_mapping(&fx.p, 0, 0, 0, "[gpu]", "");
	uint64_t locs[4] = {
		profile_simple_location(&fx.p, gpu, profile_function(&fx.p, "gemm_kernel", NULL, "", 0), FRAME_USER),
		profile_simple_location(&fx.p, fx.app, profile_function(&fx.p, "PyEval", NULL, "", 0), FRAME_USER),
		profile_simple_location(&fx.p, py, profile_function(&fx.p, "parse", NULL, "w.py", 0), FRAME_USER),
		profile_simple_location(&fx.p, fx.app, profile_function(&fx.p, "main", NULL, "", 0), FRAME_USER),
	};
	int64_t value = 1;
	assert_int_equal(profile_add_sample(&fx.p, locs, 4, &value, NULL, 0), 0);
	char *svg = render(&fx, NULL, 0);
	frame_fill(svg, "main (", fill, sizeof(fill));
	assert_int_equal(sscanf(fill, "rgb(%d,%d,%d)", &r, &g, &b), 3);
	assert_true(r >= 200 && g == b && g <= 130); /* native: red */
	frame_fill(svg, "parse (", fill, sizeof(fill));
	assert_int_equal(sscanf(fill, "rgb(%d,%d,%d)", &r, &g, &b), 3);
	assert_true(r >= 175 && r == g && b <= 70);  /* Python: yellow */
	frame_fill(svg, "gemm_kernel (", fill, sizeof(fill));
	assert_int_equal(sscanf(fill, "rgb(%d,%d,%d)", &r, &g, &b), 3);
	assert_true(r >= 190 && r == b && g <= 140); /* GPU: purple */
	free(svg);
	profile_release(&fx.p);
}

/* --palette FILE: colors found there are used, new ones added, the file rewritten sorted, the
 * lines not parsed kept verbatim (first). */
static void test_palette_file(void **state)
{
	struct fixture fx;
	struct flamegraph_opts o;
	char path[] = "/tmp/firn-palette-XXXXXX", fill[32], line[128], text[512] = "";
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	static const char pal[] = "b->rgb(1,2,3)\nweird line\r\n\n# c->rgb(300,0,0)";
	assert_int_equal(write(fd, pal, strlen(pal)), (ssize_t)strlen(pal));
	close(fd);
	fixture_init(&fx);
	add_stack(&fx, "b;k:a", 1, NULL);
	flamegraph_opts_init(&o);
	o.palette = path;
	char *svg = render(&fx, &o, 0);
	frame_fill(svg, "b (", fill, sizeof(fill));
	assert_string_equal(fill, "rgb(1,2,3)");
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		strcat(text, line);
	fclose(f);
	/* keys are the names as folded text has them (kernel suffix); "" is the root's */
	assert_string_equal(text, "weird line\r\n" "\n" "# c->rgb(300,0,0)\n" "->rgb(255,130,130)\n"
				  "a_[k]->rgb(222,122,0)\n" "b->rgb(1,2,3)\n");
	frame_fill(svg, "a (", fill, sizeof(fill));
	assert_string_equal(fill, "rgb(222,122,0)");
	free(svg);
	unlink(path);
	profile_release(&fx.p);
}

/* A palette that cannot be read (a directory) or written (a missing folder) is named as the
 * culprit through palette_failed, so the caller does not blame its input. */
static void test_palette_errors(void **state)
{
	enum flame_palette_step step = FLAME_PALETTE_OK;
	struct flamegraph_opts o;
	struct fixture fx;

	fixture_init(&fx);
	add_stack(&fx, "b;a", 1, NULL);
	flamegraph_opts_init(&o);
	o.palette_failed = &step;
	o.palette = "/";
	free(render(&fx, &o, -EISDIR));
	assert_int_equal(step, FLAME_PALETTE_READ);
	step = FLAME_PALETTE_OK;
	o.palette = "/nonexistent-firn-folder/palette.map";
	free(render(&fx, &o, -ENOENT));
	assert_int_equal(step, FLAME_PALETTE_WRITE);
	step = FLAME_PALETTE_OK;
	o.palette = NULL;
	free(render(&fx, &o, 0));
	assert_int_equal(step, FLAME_PALETTE_OK);
	profile_release(&fx.p);
}

/* Color callback for the diff test: blue for "a". */
static int blue_a(void *ctx, const struct flame_node *n, const char *name, uint8_t rgb[3])
{
	if (strcmp(name, "a"))
		return 0;
	rgb[0] = rgb[1] = 0;
	rgb[2] = 255;
	return 1;
}

/* Two values a node: widths from `value`, colors from the self delta, both in the tooltip. */
static void test_diff_tree(void **state)
{
	struct strtab names;
	struct flame_tree t;
	struct flamegraph_opts o;
	char *buf = NULL;
	size_t len = 0;

	assert_int_equal(strtab_init(&names), 0);
	flame_tree_init(&t, &names);
	tree_stack(&t, "m;b", 10, 5);  /* grew by 5 */
	tree_stack(&t, "m;c", 0, 4);   /* gone: no width, not drawn */
	tree_stack(&t, "m;d", 2, 4);   /* shrank by 2 */
	tree_stack(&t, "m;a", 3, 3);
	flamegraph_opts_init(&o);
	o.colors = FLAME_COLORS_DIFF;
	FILE *f = open_memstream(&buf, &len);
	assert_int_equal(flamegraph_write_tree(&t, f, &o), 0);
	fclose(f);
	assert_non_null(strstr(buf, "<g><title>b (10 samples, 66.67%; base 5; +33.33%)</title>"));
	assert_non_null(strstr(buf, "<g><title>d (2 samples, 13.33%; base 4; -13.33%)</title>"));
	assert_non_null(strstr(buf, "<g><title>m (15 samples, 100.00%; base 16; 0.00%)</title>"));
	assert_null(strstr(buf, "<title>c ("));
	char fill[32];
	frame_fill(buf, "b (", fill, sizeof(fill));
	assert_string_equal(fill, "rgb(255,0,0)");       /* the largest growth: full red */
	frame_fill(buf, "d (", fill, sizeof(fill));
	assert_string_equal(fill, "rgb(126,126,255)");   /* 210*(5-2)/5 = 126 */
	frame_fill(buf, "a (", fill, sizeof(fill));
	assert_string_equal(fill, "rgb(255,255,255)");
	free(buf);

	o.color_fn = blue_a;
	buf = NULL;
	f = open_memstream(&buf, &len);
	assert_int_equal(flamegraph_write_tree(&t, f, &o), 0);
	fclose(f);
	frame_fill(buf, "a (", fill, sizeof(fill));
	assert_string_equal(fill, "rgb(0,0,255)");
	free(buf);
	flame_tree_release(&t);
	strtab_release(&names);
}

/* The diff colors scale by the largest change of any frame, also one too narrow to draw. */
static void test_diff_scale_pruned(void **state)
{
	struct strtab names;
	struct flame_tree t;
	struct flamegraph_opts o;
	char *buf = NULL, fill[32];
	size_t len = 0;

	assert_int_equal(strtab_init(&names), 0);
	flame_tree_init(&t, &names);
	tree_stack(&t, "m;b", 1000, 990); /* grew by 10 */
	tree_stack(&t, "m;e", 1, 101);    /* shrank by 100; 1180/1001 = 1.18 px wide */
	flamegraph_opts_init(&o);
	o.colors = FLAME_COLORS_DIFF;
	o.minwidth = 2;
	FILE *f = open_memstream(&buf, &len);
	assert_int_equal(flamegraph_write_tree(&t, f, &o), 0);
	fclose(f);
	assert_null(strstr(buf, "<title>e ("));
	frame_fill(buf, "b (", fill, sizeof(fill));
	assert_string_equal(fill, "rgb(255,189,189)"); /* 210*(100-10)/100 = 189 */
	free(buf);
	flame_tree_release(&t);
	strtab_release(&names);
}

/* comm_root puts the "comm" label first ("[unknown]" without one); no_kernel drops kernel
 * frames; value_index out of range and bad notes are errors. */
static void test_comm_and_filters(void **state)
{
	struct fixture fx;
	struct flamegraph_opts o;

	fixture_init(&fx);
	add_stack(&fx, "main;k:sys", 2, "app");
	add_stack(&fx, "main", 1, NULL);
	char *svg = render(&fx, NULL, 0);
	assert_null(strstr(svg, "<title>app ("));
	free(svg);
	flamegraph_opts_init(&o);
	o.comm_root = true;
	svg = render(&fx, &o, 0);
	assert_frame(svg, "app (2 samples, 66.67%)",
		     "x=\"403.3\" y=\"69\" width=\"786.7\" height=\"15.0\"", "x=\"406.33\" y=\"79.5\">app");
	assert_true(has_frame(svg, "[unknown] (1 samples, 33.33%)"));
	assert_true(has_frame(svg, "sys (2 samples"));
	free(svg);
	o.no_kernel = true;
	svg = render(&fx, &o, 0);
	assert_null(strstr(svg, "sys"));
	assert_true(has_frame(svg, "main (2 samples"));
	free(svg);
	o.value_index = 1;
	free(render(&fx, &o, -EINVAL));
	o.value_index = -1;
	o.notes = "a -- b";
	free(render(&fx, &o, -EINVAL));
	o.notes = "fine";
	svg = render(&fx, &o, 0);
	assert_non_null(strstr(svg, "<!-- NOTES: fine -->"));
	free(svg);
	profile_release(&fx.p);
}

/* A profile without samples gives flamegraph.pl's error SVG and -ENODATA; counts get commas. */
static void test_empty_and_commas(void **state)
{
	struct fixture fx;

	fixture_init(&fx);
	char *svg = render(&fx, NULL, -ENODATA);
	assert_non_null(strstr(svg, "ERROR: no samples to draw.</text>\n</svg>\n"));
	free(svg);
	add_stack(&fx, "a", 1234567, NULL);
	svg = render(&fx, NULL, 0);
	assert_true(has_frame(svg, "a (1,234,567 samples, 100.00%)"));
	free(svg);
	profile_release(&fx.p);
}

/* Values in a unit: tooltips in one scale chosen from the total (ms below 10 s, s from there,
 * KiB...), the title naming the type; the layout is the same as for counts. */
static void test_units(void **state)
{
	struct fixture fx;
	struct flamegraph_opts o;

	fixture_init(&fx);
	add_stack(&fx, "main;sleep_a", 100000000, NULL);   /* 100 ms */
	add_stack(&fx, "main;read_pipe", 300000000, NULL); /* 300 ms */
	add_stack(&fx, "main;spin", 1234567, NULL);        /* 1.234567 ms */
	char *plain = render(&fx, NULL, 0);
	flamegraph_opts_init(&o);
	o.unit = "nanoseconds";
	o.title_type = "off_cpu";
	char *svg = render(&fx, &o, 0);
	assert_true(has_frame(svg, "read_pipe (300.00 ms, 74.77%)"));
	assert_true(has_frame(svg, "spin (1.23 ms, 0.31%)"));
	assert_true(has_frame(svg, "all (401.23 ms, 100%)"));
	assert_non_null(strstr(svg, ">Flame Graph: off_cpu (ms)</text>"));
	/* the same rectangles as the counts draw */
	assert_non_null(strstr(plain, "<title>read_pipe (300,000,000 samples, 74.77%)</title><rect "));
	char *a = frame_line(svg, "read_pipe"), *b = frame_line(plain, "read_pipe");
	assert_string_equal(strstr(a, "<rect"), strstr(b, "<rect"));
	free(a);
	free(b);
	free(svg);
	add_stack(&fx, "main;sleep_b", 20000000000, NULL); /* 20 s: seconds */
	o.inverted = true;
	svg = render(&fx, &o, 0);
	assert_true(has_frame(svg, "sleep_b (20.000 s, 98.03%)"));
	assert_non_null(strstr(svg, ">Icicle Graph: off_cpu (s)</text>"));
	free(svg);
	o.inverted = false;
	o.unit = "count";
	o.title_type = "usdt_app_tick";
	svg = render(&fx, &o, 0);
	assert_true(has_frame(svg, "sleep_b (20,000,000,000 samples,"));
	assert_non_null(strstr(svg, ">Flame Graph: usdt_app_tick</text>"));
	free(svg);
	free(plain);
	profile_release(&fx.p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_golden_three_stacks),
		cmocka_unit_test(test_python_gpu_colors),
		cmocka_unit_test(test_tree_merge_and_order),
		cmocka_unit_test(test_minwidth),
		cmocka_unit_test(test_diff_scale_pruned),
		cmocka_unit_test(test_reverse),
		cmocka_unit_test(test_inverted),
		cmocka_unit_test(test_escaping),
		cmocka_unit_test(test_bidi),
		cmocka_unit_test(test_labels_and_rounding),
		cmocka_unit_test(test_colors_deterministic),
		cmocka_unit_test(test_kind_colors),
		cmocka_unit_test(test_palette_file),
		cmocka_unit_test(test_palette_errors),
		cmocka_unit_test(test_diff_tree),
		cmocka_unit_test(test_comm_and_filters),
		cmocka_unit_test(test_empty_and_commas),
		cmocka_unit_test(test_units),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
