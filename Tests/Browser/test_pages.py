#!/usr/bin/env python3
"""The server's pages in a real browser: Debian's headless Chromium driven by Selenium.

Starts `webimage serve --playground` on 127.0.0.1 and checks, through the browser:
- the playground: a change of width and format shows a new image whose natural size and shown
  bytes are those of a direct request for the URL the page displays; several quick changes end
  on the last one; a click on the original sets a focus point (`g:fp:`); a bad value shows the
  server's 400 reason inline with no image;
- the playground's access rule at the HTTP level (a proxied client is refused, with the reason);
- /status after a burst: its counters are /metrics' counters, and it refreshes itself.
Screenshots of both pages go to the artifacts folder. Run by scripts/test.sh:
    python3 Tests/Browser/test_pages.py [--webimage PATH] [--artifacts DIR]
"""

import argparse
import base64
import hashlib
import hmac
import io
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request

from PIL import Image
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "Tests", "Support"))
from checks import Checks  # noqa: E402
KEY, SALT = "736563726574", "68656c6c6f"
WAIT = 30


def start_server(binary, work):
    log = open(os.path.join(work, "server.log"), "w")
    process = subprocess.Popen(
        [binary, "serve", "--bind", "127.0.0.1:0", "--key", KEY, "--salt", SALT, "--playground", "--auto-webp",
         "--result-cache-dir", os.path.join(work, "cache")],
        stdout=subprocess.PIPE, stderr=log, text=True)
    line = process.stdout.readline()
    if not line.startswith("listening on "):
        raise RuntimeError(f"the server did not start: {line!r}")
    return process, line.strip()[len("listening on "):]


def get(url, headers=None):
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=WAIT) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def sign(path):
    digest = hmac.new(bytes.fromhex(KEY), bytes.fromhex(SALT) + path.encode(), hashlib.sha256).digest()
    return "/" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode() + path


def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1400,1000"]:
        options.add_argument(argument)
    service = Service(executable_path=shutil.which("chromedriver") or "/usr/bin/chromedriver")
    return webdriver.Chrome(service=service, options=options)


def set_field(driver, element_id, text):
    field = driver.find_element(By.ID, element_id)
    field.clear()
    field.send_keys(text)


def result_state(driver):
    return driver.execute_script(
        """const r = document.getElementById('result');
        return {url: r.dataset.url || '', sequence: r.dataset.sequence || '', width: r.naturalWidth, height: r.naturalHeight,
                bytes: document.getElementById('result-bytes').textContent,
                format: document.getElementById('result-format').textContent,
                shown: document.getElementById('url-signed').textContent,
                path: document.getElementById('url-unsigned').textContent,
                error: document.getElementById('error').hidden ? '' : document.getElementById('error').textContent,
                src: r.getAttribute('src') || ''};""")


def wait_for(driver, predicate, what):
    """The page's state once `predicate` holds for it."""
    def ready(current):
        state = result_state(current)
        return state if predicate(state) else None

    try:
        return WebDriverWait(driver, WAIT, poll_frequency=0.05).until(ready)
    except Exception as error:  # noqa: BLE001 - the timeout is the finding, with the state at that moment
        raise AssertionError(f"waited {WAIT} s for {what}; the page shows {result_state(driver)}") from error


def playground(driver, base, checks, artifacts):
    print("playground", flush=True)
    driver.get(base + "/playground")
    first = wait_for(driver, lambda s: s["sequence"] and s["width"] > 0, "the first result")
    checks(first["width"] == 400 and first["height"] == 300, f"the first result is the default fill 400x300 ({first['width']}x{first['height']})")

    set_field(driver, "width", "240")
    Select(driver.find_element(By.ID, "format")).select_by_value("png")
    state = wait_for(driver, lambda s: "rs:fill:240:300" in s["url"] and s["url"].endswith(".png") and s["bytes"], "the 240-wide PNG")
    status, headers, body = get(state["shown"])
    image = Image.open(io.BytesIO(body))
    checks(status == 200, f"the displayed URL answers directly ({status})")
    checks((state["width"], state["height"]) == image.size == (240, 300), f"natural size {state['width']}x{state['height']} is the direct answer's {image.size}")
    checks(int(state["bytes"]) == len(body) == int(headers.get("Content-Length", -1)), f"shown bytes {state['bytes']} are the direct answer's {len(body)}")
    checks(state["format"] == "image/png" and image.format == "PNG", f"format {state['format']}")
    checks(state["shown"].startswith(base + "/") and "/unsafe/" not in state["shown"], "the URL shown is signed by the node")
    checks(state["shown"] == base + sign(state["path"]), "its signature is the key's HMAC of the path shown")

    # Quick changes, each within the debounce or overtaking the last: the newest wins.
    field = driver.find_element(By.ID, "width")
    field.clear()
    for digit in "123":
        field.send_keys(digit)
    state = wait_for(driver, lambda s: "rs:fill:123:300" in s["url"] and s["bytes"], "the last of quick changes")
    checks((state["width"], state["height"]) == (123, 300), f"after quick changes the last one is shown ({state['width']}x{state['height']})")

    before = int(state["sequence"])
    Select(driver.find_element(By.ID, "format")).select_by_value("")
    state = wait_for(driver, lambda s: int(s["sequence"] or 0) > before and "." not in s["url"].rsplit("/", 1)[-1], "auto format")
    checks(state["format"] == "image/webp", f"auto: the browser's Accept negotiates WebP ({state['format']})")

    original = driver.find_element(By.ID, "original")
    width, height = original.size["width"], original.size["height"]
    ActionChains(driver).move_to_element_with_offset(original, int(width * 0.3) - width // 2, int(height * 0.7) - height // 2).click().perform()
    state = wait_for(driver, lambda s: "g:fp:" in s["url"] and s["bytes"], "the focus point")
    fp = state["path"].split("g:fp:")[1].split("/")[0].split(":")
    checks(abs(float(fp[0]) - 0.3) <= 0.02 and abs(float(fp[1]) - 0.7) <= 0.02, f"a click at 30% x 70% sets g:fp:{fp[0]}:{fp[1]}")
    checks(Select(driver.find_element(By.ID, "gravity")).first_selected_option.get_attribute("value") == "fp", "the gravity control shows the focus point")
    driver.save_screenshot(os.path.join(artifacts, "playground.png"))

    set_field(driver, "background", "zz")
    state = wait_for(driver, lambda s: s["error"], "an error")
    checks(state["error"].startswith("400 ") and "bg:" in state["error"], f"a bad background shows the server's reason: {state['error']!r}")
    checks(state["src"] == "", "and no image")
    driver.save_screenshot(os.path.join(artifacts, "playground-error.png"))


def access(base, checks):
    print("playground access", flush=True)
    status, _, body = get(base + "/playground", {"X-Forwarded-For": "203.0.113.9"})
    checks(status == 403 and b"loopback clients only" in body, f"a proxied client is refused: {status} {body.decode().strip()}")
    status, _, _ = get(base + "/playground/sign?path=/a", {"Forwarded": "for=203.0.113.9"})
    checks(status == 403, f"and so is its signing ({status})")
    status, _, _ = get(base + "/playground")
    checks(status == 200, "a loopback client is served")


def status_page(driver, base, checks, artifacts):
    print("status", flush=True)
    source = base64.urlsafe_b64encode(b"local:///playground/scene.jpg").rstrip(b"=").decode()
    for width in range(20, 50):
        get(base + sign(f"/w:{width}/{source}.jpg"))
    get(base + sign(f"/w:abc/{source}.jpg"))
    driver.get(base + "/status")
    metrics = get(base + "/metrics")[2].decode()

    def metric(name):
        return int(float(next(line.rsplit(" ", 1)[1] for line in metrics.splitlines() if line.startswith(name + " "))))

    def shown(element_id):
        # The page replaces these elements every 2 s: read again when one went stale in between.
        return WebDriverWait(driver, WAIT, poll_frequency=0.1, ignored_exceptions=(StaleElementReferenceException,)).until(
            lambda d: d.find_element(By.ID, element_id).text)

    ok = metric('webimage_server_requests_total{status="200"}')
    checks(int(shown("status-200")) == ok, f"200s: page {shown('status-200')}, /metrics {ok}")
    bad = metric('webimage_server_requests_total{status="400"}')
    checks(int(shown("status-400")) == bad, f"400s: page {shown('status-400')}, /metrics {bad}")
    processed = metric("webimage_server_processing_duration_seconds_count")
    checks(int(shown("processed")) == processed, f"processed: page {shown('processed')}, /metrics {processed}")
    checks(shown("p50").endswith("ms") and shown("p99").endswith("ms"), f"latency p50 {shown('p50')}, p99 {shown('p99')}")
    slowest = driver.find_element(By.ID, "slowest").text
    signature = sign(f"/w:20/{source}.jpg").split("/")[1]
    checks("/w:" in slowest and signature not in slowest, "the slowest requests are listed without signatures")
    driver.save_screenshot(os.path.join(artifacts, "status.png"))

    for width in range(50, 55):
        get(base + sign(f"/w:{width}/{source}.jpg"))
    expected = ok + 5
    try:
        # Each refresh replaces the figures' HTML, so an element found just before it is stale when
        # its text is read: that is a poll to repeat, not a failure (it failed a CI run at once).
        WebDriverWait(driver, WAIT, poll_frequency=0.1, ignored_exceptions=(StaleElementReferenceException,)).until(
            lambda d: d.find_element(By.ID, "status-200").text == str(expected))
        refreshed = True
    except Exception:  # noqa: BLE001
        refreshed = False
    checks(refreshed, f"the page refreshed itself to {expected} answers ({shown('status-200')})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--webimage", default=os.path.join(ROOT, ".build/debug/webimage"))
    parser.add_argument("--artifacts", default=os.path.join(ROOT, ".build/browser-artifacts"))
    arguments = parser.parse_args()
    os.makedirs(arguments.artifacts, exist_ok=True)
    work = tempfile.mkdtemp(prefix="webimage-browser-")
    checks = Checks()
    process, base = start_server(arguments.webimage, work)
    driver = browser()
    try:
        playground(driver, base, checks, arguments.artifacts)
        access(base, checks)
        status_page(driver, base, checks, arguments.artifacts)
    except AssertionError as error:
        checks(False, str(error))
    finally:
        driver.quit()
        process.terminate()
        process.wait()
    if checks.failures:
        print(f"browser tests FAILED: {len(checks.failures)}; server log in {work}, screenshots in {arguments.artifacts}")
        return 1
    shutil.rmtree(work, ignore_errors=True)
    print(f"browser tests passed; screenshots in {arguments.artifacts}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
