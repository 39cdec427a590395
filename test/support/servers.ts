// The throwaway servers live beside the scripts that also start them (the demo's Redis Cluster,
// the lease bench); the tests keep importing them from here.
export * from "@/scripts/throwaway-servers";
