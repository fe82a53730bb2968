// The XDP helper table, assembled from the families.
#include "xdp/helpers.h"

namespace knod::xdp {

const vm::HelperTable& helpers() {
  static const vm::HelperTable table = [] {
    vm::HelperTable t;
    add_map_helpers(t);
    add_time_helpers(t);
    add_printk_helpers(t);
    add_redirect_helpers(t);
    add_output_helpers(t);
    add_csum_helpers(t);
    add_buff_helpers(t);
    add_fib_helpers(t);
    add_loop_helpers(t);
    add_syncookie_helpers(t);
    return t;
  }();
  return table;
}

}  // namespace knod::xdp
