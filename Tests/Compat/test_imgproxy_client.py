#!/usr/bin/env python3
"""imgproxy compatibility: URLs signed by the PyPI `imgproxy` client (klen/imgproxy 1.0), answered
by `webimage serve` started from an imgproxy environment file (only `IMGPROXY_*` variables).

Every expected value is worked out from imgproxy's source, named beside each case:
`processing/prepare.go` (calcScale, calcSizes: fit, fill, auto, enlarge, min sizes, zoom, dpr,
extend_aspect_ratio), `processing/crop.go`, `processing/padding.go`, `processing/rotate_and_flip.go`,
`processing/trim.go` with libvips' find_trim, `processing/watermark.go`, `processing/save_fit_bytes.go`,
`processing/processing.go` (skip_processing, the output format), `handlers/stream` (raw),
`options/parser/apply.go` (expires, filename, presets, security options). Where this server
differs on purpose the case says so (a malformed option is 400 here, 404 in imgproxy).

`/info` URLs, which the client does not build, are signed here the way it signs; their BlurHash is
compared with PyPI's `blurhash` reference encoder on the same pixels, their ThumbHash with PyPI's
`thumbhash`.

The client always writes `/ADVANCED/g:GRAVITY/rs:TYPE:W:H:ENLARGE/BASE64.EXT` and signs it with
HMAC-SHA256 over salt + path, so these cases also prove its signatures are accepted.

Run by scripts/test.sh with the virtual environment that has `imgproxy` and Pillow:
    python Tests/Compat/test_imgproxy_client.py [--webimage PATH]
"""

import argparse
import base64
import hashlib
import hmac
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import urllib.error
import urllib.request
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

import blurhash
import thumbhash
from imgproxy import ImgProxy
from PIL import Image

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "Tests", "Support"))
from checks import Checks  # noqa: E402
KEY, SALT = "736563726574", "68656c6c6f"


def make_sources(folder):
    """photo.jpg 640x480, alpha.png 200x100 (half transparent), framed.png 60x40 with a 10 px
    white border around a red 40x20 box, anim.gif 3 frames of 32x24, mark.png 16x16 red."""
    photo = Image.new("RGB", (640, 480))
    photo.putdata([(x * 255 // 639, y * 255 // 479, 128) for y in range(480) for x in range(640)])
    photo.save(os.path.join(folder, "photo.jpg"), quality=90)
    alpha = Image.new("RGBA", (200, 100), (0, 0, 0, 0))
    alpha.paste(Image.new("RGBA", (100, 100), (0, 0, 255, 255)), (0, 0))
    alpha.save(os.path.join(folder, "alpha.png"))
    framed = Image.new("RGB", (60, 40), (255, 255, 255))
    framed.paste(Image.new("RGB", (40, 20), (255, 0, 0)), (10, 10))
    framed.save(os.path.join(folder, "framed.png"))
    frames = [Image.new("RGB", (32, 24), color) for color in [(255, 0, 0), (0, 255, 0), (0, 0, 255)]]
    frames[0].save(os.path.join(folder, "anim.gif"), save_all=True, append_images=frames[1:], duration=100, loop=0)
    Image.new("RGBA", (16, 16), (255, 0, 0, 255)).save(os.path.join(folder, "mark.png"))
    small = Image.new("RGB", (48, 32))
    small.putdata([(x * 5, y * 8, (x * y) % 256) for y in range(32) for x in range(48)])
    small.save(os.path.join(folder, "small.png"))
    # A 16-bit greyscale PNG (Pillow writes mode I;16 as one), for preserve_hdr.
    deep = Image.new("I;16", (64, 48))
    deep.putdata([(x * 1021 + y * 317) % 65536 for y in range(48) for x in range(64)])
    deep.save(os.path.join(folder, "deep.png"))


def signed(path):
    """The client's signature (HMAC-SHA256 of salt + path, URL-safe base64 without padding), for
    /info paths, which the client does not build."""
    digest = hmac.new(bytes.fromhex(KEY), bytes.fromhex(SALT) + path.encode(), hashlib.sha256).digest()
    return "/" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode() + path


def start_origin(folder):
    handler = lambda *args: SimpleHTTPRequestHandler(*args, directory=folder)  # noqa: E731
    SimpleHTTPRequestHandler.log_message = lambda *args: None
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def start_server(binary, work, sources):
    # An imgproxy environment file, as a deployment would have it.
    environment = {
        "PATH": os.environ.get("PATH", ""), "HOME": work,
        "IMGPROXY_KEY": KEY, "IMGPROXY_SALT": SALT, "IMGPROXY_BIND": "127.0.0.1:0",
        "IMGPROXY_ALLOW_LOOPBACK_SOURCE_ADDRESSES": "true", "IMGPROXY_ALLOW_SECURITY_OPTIONS": "true",
        "IMGPROXY_PRESETS": "thumb=f:png/bg:ff0000", "IMGPROXY_WATERMARK_PATH": os.path.join(sources, "mark.png"),
        "IMGPROXY_LOCAL_FILESYSTEM_ROOT": sources, "WEBIMAGE_RESULT_CACHE_DIR": os.path.join(work, "cache"),
    }
    log = open(os.path.join(work, "server.log"), "w")
    process = subprocess.Popen([binary, "serve"], stdout=subprocess.PIPE, stderr=log, text=True, env=environment)
    line = process.stdout.readline()
    if not line.startswith("listening on "):
        raise RuntimeError(f"the server did not start: {line!r}; see {log.name}")
    return process, line.strip()[len("listening on "):]


def get(server, path):
    try:
        with urllib.request.urlopen(server + path, timeout=60) as answer:
            return answer.status, dict(answer.headers), answer.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def image(body):
    picture = Image.open(io.BytesIO(body))
    picture.load()
    return picture


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--webimage", default=os.path.join(ROOT, ".build/debug/webimage"))
    arguments = parser.parse_args()
    work = tempfile.mkdtemp(prefix="webimage-compat-")
    sources = os.path.join(work, "sources")
    os.makedirs(sources)
    make_sources(sources)
    origin, origin_url = start_origin(sources)
    process, server = start_server(arguments.webimage, work, sources)
    check = Checks()
    proxy = ImgProxy.factory(key=KEY, salt=SALT)
    photo = f"{origin_url}/photo.jpg"

    def fetch(url, *advanced, **params):
        return get(server, proxy(url, *advanced, **params)())

    def expect_size(title, url, size, *advanced, content_type=None, **params):
        status, headers, body = fetch(url, *advanced, **params)
        if status != 200:
            check(False, f"{title}: {status} {body[:200]!r}")
            return None
        picture = image(body)
        good_type = content_type is None or headers.get("Content-Type") == content_type
        check(picture.size == size and good_type,
              f"{title}: {picture.size} {headers.get('Content-Type')}, expected {size} {content_type or ''}")
        return body

    try:
        # calcScale: fit scales by the smaller ratio; a 0 side follows the other (640x480 -> 320x240).
        expect_size("fit with one side", photo, (320, 240), resizing_type="fit", width=320, extension="png",
                    content_type="image/png")
        # fill covers the box then crops by the gravity.
        expect_size("fill", photo, (200, 200), resizing_type="fill", width=200, height=200, extension="jpg",
                    content_type="image/jpeg")
        # auto: a landscape source in a portrait box is fitted (100/640 < 300/480): 100x75.
        expect_size("auto across orientations", photo, (100, 75), resizing_type="auto", width=100, height=300)
        # Without enlarge a result is never larger than the source; with it, it is.
        expect_size("no enlarging", photo, (640, 480), resizing_type="fit", width=1280)
        expect_size("enlarge", photo, (1280, 960), resizing_type="fit", width=1280, enlarge=True)
        # extend grows the canvas to the box; extend_aspect_ratio to the box's ratio (640 * 800/800).
        expect_size("extend", photo, (800, 800), "ex:1", resizing_type="fit", width=800, height=800, extension="png")
        expect_size("extend_aspect_ratio", photo, (640, 640), "exar:1", resizing_type="fit", width=800, height=800,
                    extension="png")
        # crop before resizing; padding after, in CSS order (100x75 + 10 on each side).
        expect_size("crop", photo, (320, 240), "c:320:240")
        expect_size("padding", photo, (120, 95), "pd:10", resizing_type="fit", width=100, height=100, extension="png")
        # rotate by 90 turns the sides; min-width enlarges to it; zoom and dpr multiply.
        expect_size("rotate", photo, (480, 640), "rot:90")
        expect_size("min-width", photo, (800, 600), "mw:800")
        expect_size("zoom", photo, (320, 240), "z:0.5")
        expect_size("dpr", photo, (200, 150), "dpr:2", resizing_type="fit", width=100)
        # Filters keep the size.
        for options in ["bl:2", "sh:1", "pix:8", "ar:0", "cb:v2", "g:sm", "fq:jpeg:40", "sm:0", "scp:0"]:
            expect_size(options, photo, (160, 120), options, resizing_type="fit", width=160)
        expect_size("fill with smart gravity", photo, (100, 100), resizing_type="fill", width=100, height=100,
                    gravity="sm")
        # trim (libvips find_trim): the white border goes, the red 40x20 stays.
        expect_size("trim", f"{origin_url}/framed.png", (40, 20), "t:10", extension="png")
        # Formats: f:webp, the path's extension, and the preset `thumb` (f:png/bg:ff0000).
        expect_size("format option", photo, (160, 120), "f:webp", resizing_type="fit", width=160,
                    content_type="image/webp")
        body = expect_size("preset", f"{origin_url}/alpha.png", (200, 100), "pr:thumb", content_type="image/png")
        if body:
            check(image(body).convert("RGBA").getpixel((150, 50)) == (255, 0, 0, 255), "preset: bg:ff0000 under alpha")
        # quality: a lower q is a smaller file; max_bytes searches down to one that fits.
        low = fetch(photo, "q:10", extension="jpg")[2]
        high = fetch(photo, "q:95", extension="jpg")[2]
        check(len(low) < len(high), f"q:10 {len(low)} bytes < q:95 {len(high)} bytes")
        status, _, fitted = fetch(photo, "mb:20000", extension="jpg")
        check(status == 200 and len(fitted) <= 20000, f"mb:20000: {status}, {len(fitted)} bytes")
        # skip_processing and raw answer the source's own bytes.
        original = open(os.path.join(sources, "photo.jpg"), "rb").read()
        check(fetch(photo, "skp:jpg")[2] == original, "skp:jpg: the source's bytes")
        check(fetch(photo, "raw:1", extension="png")[2] == original, "raw:1: the source's bytes")
        # The configured watermark changes the pixels, not the size.
        marked = expect_size("watermark", photo, (160, 120), "wm:1:soea:4:4:0.25", resizing_type="fit", width=160,
                             extension="png")
        plain = fetch(photo, resizing_type="fit", width=160, extension="png")[2]
        check(marked is not None and marked != plain, "wm: another image")
        if marked:
            check(image(marked).convert("RGB").getpixel((150, 110)) == (255, 0, 0), "wm: red in the bottom right corner")
        # Animations: GIF keeps its frames; max_animation_frames keeps the first.
        status, _, animated = fetch(f"{origin_url}/anim.gif", extension="gif")
        check(status == 200 and image(animated).n_frames == 3, f"animated GIF: {status}, 3 frames")
        status, _, still = fetch(f"{origin_url}/anim.gif", "maf:1", extension="gif")
        check(status == 200 and image(still).n_frames == 1, f"maf:1: {status}, 1 frame")
        # Headers: filename and attachment.
        status, headers, _ = fetch(photo, "fn:hello", "att:1", extension="jpg")
        check(headers.get("Content-Disposition") == 'attachment; filename="hello.jpg"',
              f"fn/att: {headers.get('Content-Disposition')}")
        # Refusals: security options, an expired URL, a bad option, a wrong signature.
        check(fetch(photo, "msr:0.1")[0] == 422, "msr:0.1: 640x480 over 0.1 MP is 422, as imgproxy")
        check(fetch(photo, "exp:1")[0] == 404, "exp:1: expired, 404 as imgproxy")
        check(fetch(photo, "xx:1")[0] == 400, "an unknown option: 400 here (404 in imgproxy)")
        wrong = ImgProxy(photo, key="00" + KEY[2:], salt=SALT)()
        check(get(server, wrong)[0] == 403, "a URL signed with another key: 403")
        # /info (imgproxy Pro's getting_info): the defaults, and a BlurHash equal to the PyPI
        # reference implementation's on the same pixels.
        status, headers, body = get(server, "/info" + signed(f"/plain/{origin_url}/small.png"))
        facts = json.loads(body) if status == 200 else {}
        check(facts == {"size": os.path.getsize(os.path.join(sources, "small.png")), "format": "png", "width": 48,
                        "height": 32, "orientation": 1} and headers.get("Content-Type") == "application/json",
              f"/info defaults: {status} {facts}")
        status, _, body = get(server, "/info" + signed(f"/s:0/f:0/d:0/bh:4:3/plain/{origin_url}/small.png"))
        pixels = Image.open(os.path.join(sources, "small.png")).convert("RGB")
        rows = [[list(pixels.getpixel((x, y))) for x in range(48)] for y in range(32)]
        expected = blurhash.encode(rows, components_x=4, components_y=3)
        got = json.loads(body).get("blurhash") if status == 200 else None
        check(got == expected, f"/info blurhash: {got} (PyPI blurhash: {expected})")
        # thumbhash:1 (this server's), equal to PyPI's thumbhash port on an opaque image that fits
        # 100x100 (the port's alpha branch does not run, and it rounds half to even where the
        # reference rounds half up, which no value of this image meets).
        status, _, body = get(server, "/info" + signed(f"/s:0/f:0/d:0/th:1/plain/{origin_url}/small.png"))
        expected = base64.b64encode(bytes(thumbhash.image_to_thumb_hash(os.path.join(sources, "small.png")))).decode()
        got = json.loads(body).get("thumbhash") if status == 200 else None
        check(got == expected, f"/info thumbhash: {got} (PyPI thumbhash: {expected})")
        # The paid edition's options signed by the same client: crop_aspect_ratio shrinks the
        # 320x240 crop's long side to 1:1; pages stacks the GIF's frames (3 x its height);
        # format:best keeps the smaller of the preferred formats (a photo: JPEG); ra, ush, wmt and
        # aq:size keep the size.
        expect_size("car:1", photo, (240, 240), "c:320:240", "car:1")
        status, _, gif = fetch(f"{origin_url}/anim.gif", extension="gif")
        frame = image(gif).size if status == 200 else (0, 0)
        expect_size("pgs:3", f"{origin_url}/anim.gif", (frame[0], frame[1] * 3), "pgs:3", extension="png")
        expect_size("f:best", photo, (160, 120), "f:best", resizing_type="fit", width=160, content_type="image/jpeg")
        text = base64.urlsafe_b64encode(b"<b>Hi</b>").decode().rstrip("=")
        for options in ["ra:nearest", "ra:cubic", "ush:always", "aq:size:4000:10:80", f"wm:1:nowe/wmt:{text}", "wmsh:2/wm:1"]:
            expect_size(options, photo, (160, 120), *options.split("/"), resizing_type="fit", width=160)
        status, _, fitted = fetch(photo, "aq:size:4000:10:80", resizing_type="fit", width=160, extension="jpg")
        check(status == 200 and len(fitted) <= 4000, f"aq:size:4000: {status}, {len(fitted)} bytes")
        check(fetch(photo, "aq:dssim:0.02")[0] == 400, "aq:dssim: 400 here (only size)")
        check(fetch(photo, "kcr:0", "eth:1", "ph:0", resizing_type="fit", width=160)[0] == 200, "kcr, eth, ph:0 taken")
        # preserve_hdr (imgproxy's colorspace_test.go): a 16-bit PNG stays 16-bit as PNG with ph:1
        # (its IHDR's bit depth, byte 24), is 8-bit with ph:0 and as JPEG.
        deep = f"{origin_url}/deep.png"
        depths = [(status, body[24] if status == 200 and body[:4] == b"\x89PNG" else 8) for status, _, body in (
            fetch(deep, "ph:1", width=32, extension="png"), fetch(deep, "ph:0", width=32, extension="png"),
            fetch(deep, "ph:1", width=32, extension="jpg"))]
        check(depths == [(200, 16), (200, 8), (200, 8)], f"ph:1 keeps 16 bits as PNG, ph:0 and JPEG 8: {depths}")
        status, _, body = get(server, "/info" + signed(f"/s:0/f:0/d:0/dc:1/plain/{origin_url}/small.png"))
        colors = json.loads(body).get("dominant_colors", {}) if status == 200 else {}
        check(status == 200 and all(set(c) == {"R", "G", "B"} for c in colors.values()) and colors,
              f"/info dominant_colors: {status} {colors}")
        # local:// sources under IMGPROXY_LOCAL_FILESYSTEM_ROOT; `..` stops at the root.
        expect_size("local source", "local:///photo.jpg", (320, 240), resizing_type="fit", width=320)
        check(fetch("local:///../sources/photo.jpg")[0] == 404, "local:///../ stays in the root")
    finally:
        process.terminate()
        process.wait(timeout=30)
        origin.shutdown()
    if check.failures:
        print(f"{len(check.failures)} check(s) failed; server log: {os.path.join(work, 'server.log')}")
        sys.exit(1)
    shutil.rmtree(work, ignore_errors=True)
    print("all imgproxy client checks passed")


if __name__ == "__main__":
    main()
