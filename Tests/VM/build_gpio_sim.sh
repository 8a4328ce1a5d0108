#!/bin/bash
# Builds gpio-sim.ko and irq_sim.ko, the kernel's GPIO simulator, for the test kernel: Debian's kernel does not
# build them (CONFIG_GPIO_SIM and CONFIG_IRQ_SIM are off), so they are compiled out of tree from Debian's
# linux-source package against the kernel's headers. irq_sim.c calls irq_to_desc(), which modules cannot use;
# generic_handle_irq() does the same for its simple handler. Installs both packages when they are missing (as
# root). Prints the two modules' paths, irq_sim first (gpio-sim needs it); the build is kept under
# /tmp/vitrine-vm/gpio-sim-KERNEL and reused.
# Usage: build_gpio_sim.sh [KERNEL-VERSION]   (default: the newest /boot/vmlinuz-*)
set -euo pipefail
read -r kernel series source_tar < <("$(dirname "$0")/kernel_source.sh" "${1:-}")
out=/tmp/vitrine-vm/gpio-sim-$kernel
if [ -f "$out/gpio-sim.ko" ] && [ -f "$out/irq_sim.ko" ]; then
    echo "$out/irq_sim.ko $out/gpio-sim.ko"
    exit 0
fi
"$(dirname "$0")/kernel_source.sh" --install "$kernel" >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tree=linux-source-$series
tar -xJf "$source_tar" -C "$work" "$tree/drivers/gpio/gpio-sim.c" "$tree/drivers/gpio/gpiolib.h" \
    "$tree/kernel/irq/irq_sim.c"
build=$work/build
mkdir -p "$build"
cp "$work/$tree/drivers/gpio/gpio-sim.c" "$work/$tree/drivers/gpio/gpiolib.h" "$work/$tree/kernel/irq/irq_sim.c" \
    "$build/"
sed -i 's/handle_simple_irq(irq_to_desc(irqnum));/generic_handle_irq(irqnum);/' "$build/irq_sim.c"
grep -q 'generic_handle_irq(irqnum);' "$build/irq_sim.c" || { echo "irq_sim.c changed: cannot patch it" >&2; exit 1; }
sed -i '1i #include <linux/module.h>' "$build/irq_sim.c"
echo 'MODULE_LICENSE("GPL");' >>"$build/irq_sim.c"
echo 'obj-m += gpio-sim.o irq_sim.o' >"$build/Makefile"
make -s -C "/lib/modules/$kernel/build" M="$build" modules >&2
mkdir -p "$out"
for module in irq_sim gpio-sim; do
    cp "$build/$module.ko" "$out/$module.ko.tmp"
    mv "$out/$module.ko.tmp" "$out/$module.ko"
done
echo "$out/irq_sim.ko $out/gpio-sim.ko"
