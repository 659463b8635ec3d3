#ifndef TUREEN_CCURL_SHIM_H
#define TUREEN_CCURL_SHIM_H
#include <curl/curl.h>
#endif
