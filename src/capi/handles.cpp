#include "capi/handles.h"

namespace hark::capi {

Handles& handles() {
  static Handles* h = new Handles();  // never destroyed: see handles.h
  return *h;
}

}  // namespace hark::capi
