#!/usr/bin/env python3
"""A loopback Pyroscope /ingest server for the push tests: python3 pyroscope_server.py PORT DIR.

Request i's multipart 'profile' part is written to DIR/i.pb.gz, and its path and X-Scope-OrgID
to DIR/i.url (two lines); every request gets 200. Decoding is Python's own email parser, not
firn's code."""
import email.parser
import email.policy
import http.server
import itertools
import sys

port, out = int(sys.argv[1]), sys.argv[2]
n = itertools.count()


class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers['Content-Length']))
        msg = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
            b'Content-Type: ' + self.headers['Content-Type'].encode() + b'\r\n\r\n' + body)
        i = next(n)
        for part in msg.iter_parts():
            if part.get_param('name', header='content-disposition') == 'profile':
                open(f'{out}/{i}.pb.gz', 'wb').write(part.get_payload(decode=True))
        open(f'{out}/{i}.url', 'w').write(self.path + '\n' + (self.headers.get('X-Scope-OrgID') or '') + '\n')
        self.send_response(200)
        self.end_headers()

    def log_message(self, *a):
        pass


http.server.HTTPServer(('127.0.0.1', port), H).serve_forever()
