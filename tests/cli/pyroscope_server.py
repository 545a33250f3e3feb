#!/usr/bin/env python3
"""A loopback Pyroscope /ingest server for the push tests:
python3 pyroscope_server.py PORT DIR [--tls CERT KEY].

Request i's multipart 'profile' part is written to DIR/i.pb.gz, and its path, X-Scope-OrgID and
Authorization to DIR/i.url (three lines); every request gets 200. DIR/ready appears once it
listens. With --tls it speaks HTTPS only, with the certificate chain CERT (PEM) and its key KEY;
a client that fails the handshake (does not trust CERT) is counted in DIR/tls_failed, one line
each, and nothing of it is written. Decoding is Python's own email parser, not firn's code."""
import email.parser
import email.policy
import http.server
import itertools
import ssl
import sys

port, out = int(sys.argv[1]), sys.argv[2]
tls = sys.argv[3:6] if len(sys.argv) >= 6 and sys.argv[3] == '--tls' else None
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
        open(f'{out}/{i}.url', 'w').write(self.path + '\n' + (self.headers.get('X-Scope-OrgID') or '') + '\n' +
                                          (self.headers.get('Authorization') or '') + '\n')
        self.send_response(200)
        self.end_headers()

    def log_message(self, *a):
        pass


class TLSServer(http.server.HTTPServer):
    """The handshake in the handler's thread of control, after accept: a failed one is noted,
    not raised out of serve_forever (accept's own handshake would hide it)."""

    def finish_request(self, request, client_address):
        request.settimeout(10)  # a client that stalls the handshake does not stall the server
        try:
            request.do_handshake()
        except (ssl.SSLError, OSError) as e:
            open(f'{out}/tls_failed', 'a').write(f'{e}\n')
            return
        super().finish_request(request, client_address)


if tls:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(tls[1], tls[2])
    srv = TLSServer(('127.0.0.1', port), H)
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True, do_handshake_on_connect=False)
else:
    srv = http.server.HTTPServer(('127.0.0.1', port), H)
open(f'{out}/ready', 'w').close()
srv.serve_forever()
