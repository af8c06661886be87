"""The Istio engine: networking objects read from their records, and istioctl analyze's checks
over them."""
