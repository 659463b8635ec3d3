#ifndef TUREEN_CSQLCIPHER_SHIM_H
#define TUREEN_CSQLCIPHER_SHIM_H
/* SQLCipher's header only declares sqlite3_key and friends with the codec on. */
#define SQLITE_HAS_CODEC 1
#include <sqlcipher/sqlite3.h>
#endif
