public import WebImage
