#include <lcms2.h>

// lcms2's pixel types are nested function-like macros, which Swift does not import.
static const cmsUInt32Number cwi_lcms_type_rgba_8 = TYPE_RGBA_8;
static const cmsUInt32Number cwi_lcms_type_rgb_8 = TYPE_RGB_8;
static const cmsUInt32Number cwi_lcms_type_gray_8 = TYPE_GRAY_8;
