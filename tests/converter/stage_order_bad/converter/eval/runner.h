// The later stage's header the bad spec.h includes.
