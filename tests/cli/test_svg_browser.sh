#!/usr/bin/env bash
# Flame graphs end to end: `firn report --svg` on folded text (exact rectangles, the flame graph
# options, usage errors, the palette file), then the SVG in headless Chromium: hover, click to
# zoom, Reset Zoom, search through the prompt and its matched %, the "ic" toggle, the URL state
# (?s=..&x=..&y=.. reproduces a view) and a screenshot.
#
# How Chromium is driven: `chromium --headless --remote-debugging-pipe` speaks the DevTools
# protocol as NUL-terminated JSON on file descriptors 3 and 4, so a few lines of Python (standard
# library only, no websocket client) can send real mouse events (Input.dispatchMouseEvent),
# answer the search prompt (Page.javascriptDialogOpening -> Page.handleJavaScriptDialog), read
# the DOM (Runtime.evaluate) and take a screenshot (Page.captureScreenshot). --dump-dom alone
# could only check views restored from the URL: it cannot click or type. The SVG is opened
# directly as a file:// document (no HTML wrapper needed: its script runs, and
# history.replaceState works on file URLs). Without chromium the browser part is skipped.
. "$(dirname "$0")/lib.sh"

# 100 samples: shares are exact percentages.
cat >"$TMP/in.folded" <<'EOF'
main;init;parse_config 10
main;run;compute 20
main;run;compute;crc32_[k] 30
main;run;helper;compute 5
main;run;io_wait_for_block_device_read 15
main;shutdown 20
EOF

# frame SVG TITLE: the line of the frame whose tooltip is TITLE, from <g> to the rect's fill.
frame() { grep -F "<g><title>$2</title>" "$1" | sed 's/ fill=.*//'; }

expect_rc "report --svg writes a flame graph" 0 "$FIRN" report --svg -o "$TMP/g.svg" "$TMP/in.folded"
check "svg is well-formed XML" python3 -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' "$TMP/g.svg"
# total 100 -> 11.8 px a sample; depth 4 -> height 5*16+36+34 = 150; y = 150-34-(depth+1)*16+1.
check "image height from the deepest frame" grep -q '<svg version="1.1" width="1200" height="150" ' "$TMP/g.svg"
check "run: x, y and width as flamegraph.pl" \
	test "$(frame "$TMP/g.svg" 'run (70 samples, 70.00%)')" = \
	'<g><title>run (70 samples, 70.00%)</title><rect x="128.0" y="69" width="826.0" height="15.0"'
check "kernel frame: annotation kept out of the name" \
	test "$(frame "$TMP/g.svg" 'crc32 (30 samples, 30.00%)')" = \
	'<g><title>crc32 (30 samples, 30.00%)</title><rect x="364.0" y="37" width="354.0" height="15.0"'
check "self value left of the children (compute)" \
	test "$(frame "$TMP/g.svg" 'compute (50 samples, 50.00%)')" = \
	'<g><title>compute (50 samples, 50.00%)</title><rect x="128.0" y="53" width="590.0" height="15.0"'
check "label cut to fit with .." grep -q '>io_wait_for_block_devic..</text>' "$TMP/g.svg"
check "eleven frames" test "$(grep -c '^<g><title>' "$TMP/g.svg")" -eq 11

expect_rc "options: width, inverted, title, minwidth %" 0 "$FIRN" report --svg --width 600 --inverted \
	--title 'T&T' --subtitle sub --minwidth 6% --countname ms --nametype Fn: --notes note \
	-o "$TMP/o.svg" "$TMP/in.folded"
check "width 600" grep -q '<svg version="1.1" width="600" height="174" ' "$TMP/o.svg"
check "title escaped" grep -q '<text id="title" x="300.00" y="24">T&amp;T</text>' "$TMP/o.svg"
check "minwidth 6% drops the 5% frame" test "$(grep -c '<title>helper' "$TMP/o.svg")" -eq 0
check "countname and inverted root at the top" \
	test "$(frame "$TMP/o.svg" 'all (100 ms, 100%)')" = \
	'<g><title>all (100 ms, 100%)</title><rect x="10.0" y="60" width="580.0" height="15.0"'
check "nametype in the script" grep -q 'nametype: "Fn:"' "$TMP/o.svg"
check "notes comment" grep -q '<!-- NOTES: note -->' "$TMP/o.svg"
expect_rc "reverse" 0 "$FIRN" report --svg --reverse -o "$TMP/r.svg" "$TMP/in.folded"
check "reverse: leaf frames at the bottom" \
	test "$(frame "$TMP/r.svg" 'compute (25 samples, 25.00%)')" = \
	'<g><title>compute (25 samples, 25.00%)</title><rect x="10.0" y="85" width="295.0" height="15.0"'

expect_rc "--width too small is a usage error" 2 "$FIRN" report --svg --width 5 "$TMP/in.folded"
expect_rc "--minwidth not a number" 2 "$FIRN" report --svg --minwidth 1x "$TMP/in.folded"
expect_rc "--minwidth over 100%" 2 "$FIRN" report --svg --minwidth 150% "$TMP/in.folded"
expect_rc "--colors unknown" 2 "$FIRN" report --svg --colors plaid "$TMP/in.folded"
expect_rc "--notes with --" 2 "$FIRN" report --svg --notes 'a--b' "$TMP/in.folded"
expect_rc "--height 0" 2 "$FIRN" report --svg --height 0 "$TMP/in.folded"
expect_rc "help lists the flame graph options" 0 "$FIRN" report --help
check "help: minwidth" grep -q -- '--minwidth PX|PCT%' "$TMP/out"

expect_rc "palette: first run" 0 "$FIRN" report --svg --colors hot --palette "$TMP/pal.map" -o "$TMP/p1.svg" "$TMP/in.folded"
check "palette file has the kernel frame's folded name" grep -q '^crc32_\[k\]->rgb(' "$TMP/pal.map"
sed -i 's/^compute->rgb(.*/compute->rgb(1,2,3)/' "$TMP/pal.map"
expect_rc "palette: second run" 0 "$FIRN" report --svg --colors hot --palette "$TMP/pal.map" -o "$TMP/p2.svg" "$TMP/in.folded"
check "palette color used" grep -q '<title>compute (50 samples, 50.00%)</title><rect [^>]*fill="rgb(1,2,3)"' "$TMP/p2.svg"
check "other colors kept" test "$(grep -v compute "$TMP/p1.svg" | md5sum)" = "$(grep -v compute "$TMP/p2.svg" | md5sum)"

CHROMIUM=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)}
if [ -z "$CHROMIUM" ]; then
	skip "browser checks: no chromium (apt-get install chromium)"
	exit 0
fi

timeout 90 python3 - "$CHROMIUM" "$TMP/g.svg" "$TMP/flamegraph.png" "$TMP" <<'PYEOF'
import base64, fcntl, json, os, select, struct, subprocess, sys, tempfile, time

exe, svg, png, tmp = sys.argv[1:5]
url = "file://" + os.path.abspath(svg)

def report(ok, name):
    print(("PASS: " if ok else "FAIL: ") + name, flush=True)

class Chrome:
    """Chromium with the DevTools protocol on a pipe (fds 3 and 4, NUL-terminated JSON)."""
    def __init__(self):
        r1, self.wfd = os.pipe()
        self.rfd, w2 = os.pipe()
        hr, hw = fcntl.fcntl(r1, fcntl.F_DUPFD, 100), fcntl.fcntl(w2, fcntl.F_DUPFD, 100)
        os.close(r1)
        os.close(w2)
        udir = tempfile.mkdtemp(dir=tmp)
        args = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                "--no-first-run", "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--hide-scrollbars", "--user-data-dir=" + udir,
                "--remote-debugging-pipe", "--window-size=1200,400", "about:blank"]
        self.p = subprocess.Popen(args, pass_fds=(3, 4), preexec_fn=lambda: (os.dup2(hr, 3), os.dup2(hw, 4)),
                                  stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                  stderr=open(os.path.join(udir, "stderr"), "w"))
        os.close(hr)
        os.close(hw)
        self.buf, self.id, self.prompt_text, self.session = b"", 0, None, None

    def send(self, method, params=None):
        self.id += 1
        msg = {"id": self.id, "method": method, "params": params or {}}
        if self.session:
            msg["sessionId"] = self.session
        os.write(self.wfd, json.dumps(msg).encode() + b"\0")
        return self.id

    def wait(self, mid, timeout=15):
        deadline = time.time() + timeout
        while True:
            while b"\0" not in self.buf:
                left = deadline - time.time()
                if left <= 0 or not select.select([self.rfd], [], [], left)[0]:
                    raise TimeoutError("chromium did not answer")
                chunk = os.read(self.rfd, 1 << 20)
                if not chunk:
                    raise EOFError("chromium exited")
                self.buf += chunk
            raw, self.buf = self.buf.split(b"\0", 1)
            m = json.loads(raw)
            if m.get("method") == "Page.javascriptDialogOpening":
                self.send("Page.handleJavaScriptDialog", {"accept": True, "promptText": self.prompt_text})
            if m.get("id") == mid:
                if "error" in m:
                    raise RuntimeError(m["error"])
                return m.get("result", {})

    def call(self, method, params=None):
        return self.wait(self.send(method, params))

    def open(self, u):
        self.session = None
        tid = self.call("Target.createTarget", {"url": u})["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": tid, "flatten": True})["sessionId"]
        self.call("Page.enable")
        self.call("Emulation.setDeviceMetricsOverride", {"width": 1200, "height": 400,
                                                         "deviceScaleFactor": 1, "mobile": False})
        for _ in range(100):
            if self.js("typeof fgframes !== 'undefined' && fgframes.length > 0"):
                return
            time.sleep(0.1)
        raise TimeoutError("the flame graph's script did not run")

    def js(self, expr):
        r = self.call("Runtime.evaluate", {"expression": expr, "returnByValue": True})
        if "exceptionDetails" in r:
            raise RuntimeError(r["exceptionDetails"])
        return r["result"].get("value")

    def mouse(self, kind, x, y):
        return self.send("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1})

    def click(self, el, prompt=None):
        """Clicks the middle of element expression el (a prompt it opens is answered with prompt)."""
        x, y = self.js("(function(){var b=(%s).getBoundingClientRect();return [b.x+b.width/2,b.y+b.height/2];})()" % el)
        self.prompt_text = prompt
        self.mouse("mouseMoved", x, y)
        self.mouse("mousePressed", x, y)
        self.wait(self.mouse("mouseReleased", x, y))

def frame(name, what):
    return "fgframes.filter(function(f){return f.name==%s})[0].%s" % (json.dumps(name), what)

c = Chrome()
try:
    c.open(url)
    ngroups = open(svg).read().count("<g><title>")
    report(c.js("fgframes.length") == ngroups, "browser: the script reads every frame (%d)" % ngroups)
    c.click(frame("run", "r"))
    # the click moved over "run" first: the details line shows its tooltip
    report(c.js("document.getElementById('details').textContent") == "Function: run (70 samples, 70.00%)",
           "browser: hover shows name, samples and %")
    report(c.js(frame("run", "r.getAttribute('width')")) == "1180" and c.js(frame("run", "r.getAttribute('x')")) == "10",
           "browser: click zooms the frame to the full width")
    report(c.js(frame("main", "g.getAttribute('class')")) == "parent" and
           c.js(frame("shutdown", "g.getAttribute('class')")) == "hide",
           "browser: zoom fades ancestors and hides other paths")
    report(c.js(frame("compute", "r.getAttribute('width')")) == str(round(590 * 1180 / 826, 2)),
           "browser: children scale with the zoom")
    report(c.js(frame("io_wait_for_block_device_read", "t.textContent")) == "io_wait_for_block_device_read",
           "browser: a cut label shows in full once it fits")
    report(c.js("location.search") == "?x=128.0&y=69", "browser: zoom kept in the URL")
    report(c.js("document.getElementById('unzoom').getAttribute('class')") == "", "browser: Reset Zoom shown")
    c.click("document.getElementById('unzoom')")
    report(c.js(frame("run", "r.getAttribute('width')")) == "826.0" and c.js("location.search") == "",
           "browser: Reset Zoom restores the graph and the URL")
    c.click("document.getElementById('search')", "compute")
    report(c.js("document.getElementById('matched').textContent") == "Matched: 55.0%",
           "browser: search 'compute' matches 55.0%")
    report(c.js(frame("compute", "r.getAttribute('fill')")) == "rgb(230,0,230)", "browser: matches highlighted")
    report(c.js("location.search") == "?s=compute", "browser: search kept in the URL")
    c.click("document.getElementById('search')")  # now "Reset Search"
    report(c.js("document.getElementById('matched').textContent") == " ", "browser: Reset Search")
    c.click("document.getElementById('search')", "COMPUTE")
    report(c.js("document.getElementById('matched').textContent") == " ", "browser: search is case-sensitive")
    c.click("document.getElementById('ignorecase')")
    report(c.js("document.getElementById('matched').textContent") == "Matched: 55.0%" and
           c.js("location.search") == "?s=COMPUTE&ic=1", "browser: ic makes it case-insensitive")
    c.click(frame("compute", "r"))
    shot = base64.b64decode(c.call("Page.captureScreenshot", {"format": "png"})["data"])
    open(png, "wb").write(shot)
    w, h = struct.unpack(">II", shot[16:24])
    report(shot[:8] == b"\x89PNG\r\n\x1a\n" and w == 1200 and h == 400 and len(shot) > 8000,
           "browser: screenshot (%d bytes)" % len(shot))
    # a link reproduces the view: zoom and search from the URL alone
    c.open(url + "?s=%5Erun%24&x=128.0&y=69")
    report(c.js("document.getElementById('matched').textContent") == "Matched: 70.0%" and
           c.js(frame("run", "r.getAttribute('width')")) == "1180", "browser: view restored from the URL")
except Exception as e:
    report(False, "browser: %s: %s" % (type(e).__name__, e))
finally:
    try:
        c.session = None
        c.call("Browser.close")
        c.p.wait(10)
    except Exception:
        c.p.kill()
PYEOF
[ -n "${FIRN_SCREENSHOT:-}" ] && cp "$TMP/flamegraph.png" "$FIRN_SCREENSHOT"
exit 0
