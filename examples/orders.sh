#!/usr/bin/env bash
# A logic-only script: data in here-documents, functions, arrays, loops and text commands.
# Run it with:  python -m scripted_kernel run examples/orders.sh

orders=$(cat <<'CSV'
1001,alice,widget,3,2.50
1002,bob,gadget,1,10.00
1003,alice,gadget,2,10.00
1004,carol,widget,10,2.50
1005,bob,doohickey,5,4.25
CSV
)

declare -A spent count
total_cents=0

to_cents() {                       # 2.50 -> 250
  local whole=${1%.*} frac=${1#*.}
  echo $(( 10#$whole * 100 + 10#${frac:0:2} ))
}

while IFS=, read -r id customer item qty price; do
  cents=$(( qty * $(to_cents "$price") ))
  spent[$customer]=$(( ${spent[$customer]:-0} + cents ))
  count[$customer]=$(( ${count[$customer]:-0} + 1 ))
  (( total_cents += cents ))
done <<< "$orders"

echo "Customers by spend:"
for customer in "${!spent[@]}"; do
  printf '%-6s %2d orders %8.2f\n' "$customer" "${count[$customer]}" \
    "$(( spent[$customer] / 100 )).$(printf '%02d' $(( spent[$customer] % 100 )))"
done | sort -k4 -rn

printf 'Total: %d.%02d\n' $(( total_cents / 100 )) $(( total_cents % 100 ))

best=$(echo "$orders" | cut -d, -f3 | sort | uniq -c | sort -rn | head -1)
times=${best% *}
echo "Most ordered item: ${best##* } (${times//[[:space:]]/} orders)"

if [[ $(echo "$orders" | grep -c alice) -ge 2 ]]; then
  echo "alice is a repeat customer"
fi
