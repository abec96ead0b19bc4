"""Photo-like JPEGs for the comparisons: a grey gradient, coloured discs, a Gaussian blur and
grain, saved at quality 88; smooth like a photograph, so the codecs do a photograph's work."""
import random
from io import BytesIO


def photo_jpeg(seed: int, width: int, height: int, discs: int, radii: tuple, blur: float) -> bytes:
    """One picture: the same discs for the same seed; the grain is Pillow's noise, new each time."""
    from PIL import Image, ImageDraw, ImageFilter
    generator = random.Random(seed)
    picture = Image.linear_gradient("L").resize((width, height)).convert("RGB")
    draw = ImageDraw.Draw(picture)
    for _ in range(discs):
        x, y, r = generator.randrange(width), generator.randrange(height), generator.randrange(*radii)
        draw.ellipse((x - r, y - r, x + r, y + r), fill=tuple(generator.randrange(256) for _ in range(3)))
    picture = Image.blend(picture.filter(ImageFilter.GaussianBlur(blur)), Image.effect_noise((width, height), 24).convert("RGB"), 0.18)
    buffer = BytesIO()
    picture.save(buffer, "JPEG", quality=88)
    return buffer.getvalue()
