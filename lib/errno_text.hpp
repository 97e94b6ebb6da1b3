// The words for a system error number, as error messages quote them.
#pragma once

#include <string>

namespace sup {

// strerrordesc_np's text for err ("No such file or directory"), or
// "error N" for a number it does not know; never null.
std::string errno_text(int err);

}  // namespace sup
