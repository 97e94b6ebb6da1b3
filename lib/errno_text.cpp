// The words for a system error number, as error messages quote them.
#include "errno_text.hpp"

#include <string.h>

namespace sup {

std::string errno_text(int err) {
  const char* text = strerrordesc_np(err);
  return text != nullptr ? text : "error " + std::to_string(err);
}

}  // namespace sup
