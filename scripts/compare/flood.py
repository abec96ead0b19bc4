"""Issue 36 item 2: 70 requests to a 1 byte/s origin whose clients leave after 1 s, then ten normal misses.

Usage: /usr/bin/python3 scripts/compare/flood.py PATH/TO/webimage PHOTO.jpg   (loopback only)
"""
import http.server, socketserver, subprocess, sys, threading, time, urllib.request, socket, os
DRIP, PROXY = 18931, 18932
photo = open(sys.argv[2], "rb").read()
class Drip(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path.startswith("/photo"):
            self.send_response(200); self.send_header("Content-Type", "image/jpeg"); self.send_header("Content-Length", str(len(photo))); self.end_headers(); self.wfile.write(photo); return
        self.send_response(200); self.send_header("Content-Type", "image/jpeg"); self.send_header("Content-Length", "100000"); self.end_headers()
        try:
            for _ in range(100000):
                self.wfile.write(b"\xff"); self.wfile.flush(); time.sleep(1)
        except Exception:
            pass
    def log_message(self, *a): pass
class Server(socketserver.ThreadingMixIn, http.server.HTTPServer): daemon_threads = True
threading.Thread(target=Server(("127.0.0.1", DRIP), Drip).serve_forever, daemon=True).start()
node = subprocess.Popen([sys.argv[1], "serve", "--bind", f"127.0.0.1:{PROXY}", "--allow-unsigned", "--allow-loopback-sources",
    "--result-cache-dir", "/tmp/flood/cache", "--log-level", "error", "--concurrency", "2"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
for _ in range(100):
    try: urllib.request.urlopen(f"http://127.0.0.1:{PROXY}/health", timeout=1); break
    except Exception: time.sleep(0.1)
def abandoned(i):
    s = socket.create_connection(("127.0.0.1", PROXY)); s.sendall(f"GET /unsafe/w:{10+i}/plain/http://127.0.0.1:{DRIP}/slow{i}.jpg HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    time.sleep(1); s.close()
threads = [threading.Thread(target=abandoned, args=(i,)) for i in range(70)]
for t in threads: t.start()
for t in threads: t.join()
time.sleep(1)
times = []
for i in range(10):
    start = time.monotonic()
    answer = urllib.request.urlopen(f"http://127.0.0.1:{PROXY}/unsafe/w:{100+i}/plain/http://127.0.0.1:{DRIP}/photo{i}.jpg", timeout=30)
    answer.read(); times.append((time.monotonic() - start) * 1000)
metrics = urllib.request.urlopen(f"http://127.0.0.1:{PROXY}/metrics").read().decode()
running = [l for l in metrics.splitlines() if l.startswith("webimage_server_requests_running") or l.startswith("webimage_server_requests_queued")]
print("normal misses after the flood: status 200, ms:", " ".join(f"{t:.0f}" for t in times), "| max", f"{max(times):.0f}")
print("gauges:", running)
node.kill()
