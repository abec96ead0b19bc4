#include <lcms2.h>

// lcms2's pixel types are nested function-like macros, which Swift does not import.
static const cmsUInt32Number cwi_lcms_type_rgba_8 = TYPE_RGBA_8;
static const cmsUInt32Number cwi_lcms_type_rgb_8 = TYPE_RGB_8;
static const cmsUInt32Number cwi_lcms_type_gray_8 = TYPE_GRAY_8;
static const cmsUInt32Number cwi_lcms_type_rgba_16 = TYPE_RGBA_16;
static const cmsUInt32Number cwi_lcms_type_rgb_16 = TYPE_RGB_16;
static const cmsUInt32Number cwi_lcms_type_gray_16 = TYPE_GRAY_16;
