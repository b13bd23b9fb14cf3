/* HARK_API marks what libhark.so exports: the public API and nothing else. The library is built
 * with hidden visibility, so everything not marked stays internal to it. Usable from C and C++. */
#ifndef HARK_EXPORT_H
#define HARK_EXPORT_H

#if defined(_WIN32)
#if defined(HARK_BUILDING_LIBRARY)
#define HARK_API __declspec(dllexport)
#else
#define HARK_API
#endif
#elif defined(__GNUC__) || defined(__clang__)
#define HARK_API __attribute__((visibility("default")))
#else
#define HARK_API
#endif

#endif /* HARK_EXPORT_H */
