/* export.h: the marker of libairlock's exported functions (internal). */
#ifndef AIRLOCK_EXPORT_H
#define AIRLOCK_EXPORT_H

/*
 * The library is built with -fvisibility=hidden; only functions marked with
 * this are exported, and only if libairlock.map names them as well.
 */
#define AIRLOCK_EXPORT __attribute__((visibility("default")))

#endif
