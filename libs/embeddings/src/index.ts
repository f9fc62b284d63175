export * from './provider';
export * from './wordnet';
export * from './local';
export * from './openai';
