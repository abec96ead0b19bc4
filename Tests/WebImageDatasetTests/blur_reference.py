"""img2dataset 1.47's BoundingBoxBlurrer on a PNG: the oracle of BoundingBoxBlur's test.

Loads img2dataset/blurrer.py by its path (img2dataset's package imports its whole pipeline),
reads the image with OpenCV as img2dataset does, blurs the boxes given as JSON, writes the result.
Usage: blur_reference.py INPUT.png BOXES_JSON OUTPUT.png
"""
import importlib.util
import json
import os
import sys

os.environ["NO_ALBUMENTATIONS_UPDATE"] = "1"  # no update check: nothing leaves the machine

import cv2

package = importlib.util.find_spec("img2dataset").submodule_search_locations[0]
spec = importlib.util.spec_from_file_location("img2dataset_blurrer", os.path.join(package, "blurrer.py"))
blurrer = importlib.util.module_from_spec(spec)
spec.loader.exec_module(blurrer)

image = cv2.imread(sys.argv[1], cv2.IMREAD_UNCHANGED)
result = blurrer.BoundingBoxBlurrer()(img=image, bbox_list=json.loads(sys.argv[2]))
cv2.imwrite(sys.argv[3], result)
