// A spec file that reaches into the evaluation stage: stage_order.cmake must
// refuse it (the test converter_stage_order_catches_later_include).
#include "converter/eval/runner.h"
