#!/usr/bin/env python3
"""Peer side of the `color` comparison: Pillow converting a Display P3 JPEG, decoded beforehand, to
sRGB. `profile-to-profile` is ImageCms.profileToProfile as users call it (the transform built on
each call); `transform` applies one transform built beforehand: Little CMS's own speed, the floor."""
import io
import json
import sys
import time

from PIL import Image, ImageCms


def main():
    mode, path, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
    image = Image.open(path)
    profile = ImageCms.ImageCmsProfile(io.BytesIO(image.info["icc_profile"]))
    image = image.convert("RGB")
    image.load()
    srgb = ImageCms.createProfile("sRGB")
    built = ImageCms.buildTransform(profile, srgb, "RGB", "RGB")
    start = time.perf_counter()
    for _ in range(rounds):
        if mode == "profile-to-profile":
            result = ImageCms.profileToProfile(image, profile, srgb)
        else:
            result = ImageCms.applyTransform(image, built)
        assert result.size == image.size
    elapsed = time.perf_counter() - start
    print(json.dumps({"operations": rounds, "seconds": elapsed}))


if __name__ == "__main__":
    main()
