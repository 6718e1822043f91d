#include "runtime/context.h"

namespace zinfer::runtime {

zmq::context_t& zmq_context() {
  // Never destroyed: actors may still be closing sockets while static destructors run, and
  // zmq_ctx_term would block on them.
  static zmq::context_t* ctx = [] {
    auto* c = new zmq::context_t(2);
    c->set(zmq::ctxopt::max_sockets, 65536);
    return c;
  }();
  return *ctx;
}

}  // namespace zinfer::runtime
