#pragma once
// What /proc says about a process: its resident size and the CPU it has used.
#include <sys/types.h>

#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

namespace fl::testing {

// A process's resident set size in KiB (VmRSS), 0 if unknown.
inline long resident_kib(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  return 0;
}

// User plus system CPU the process has used so far, in clock ticks (/proc/PID/stat, fields 14 and
// 15); 0 if unknown.
inline long cpu_ticks(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto close = text.rfind(')');  // the name before it may hold spaces
  if (close == std::string::npos) return 0;
  std::istringstream fields(text.substr(close + 2));
  std::string field;
  long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i) {
    if (i == 14) utime = std::stol(field);
    if (i == 15) stime = std::stol(field);
  }
  return utime + stime;
}

}  // namespace fl::testing
